import Foundation

/// The folder of the built products, where `logged-import` is (the test bundle's folder on Linux).
var productsDirectory: URL {
    #if os(macOS)
    for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
        return bundle.bundleURL.deletingLastPathComponent()
    }
    #endif
    return Bundle.main.bundleURL
}
