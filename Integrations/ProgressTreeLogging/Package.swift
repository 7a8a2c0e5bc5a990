// swift-tools-version: 6.0
import PackageDescription

// ProgressTreeLogging: a swift-log `LogHandler` that prints each record above a `TerminalRenderer`'s live
// area. A package of its own, so that the root package keeps no dependencies: a program that depends on
// ProgressTree's products alone resolves and builds no other package, and only a program that adds this
// package gets swift-log (see README.md, "Logging through swift-log").
let package = Package(
    name: "ProgressTreeLogging",
    // As the root package's: `Synchronization` sets the floor on Apple platforms, and the terminal module
    // (which this one depends on) builds on Linux, macOS, iOS and visionOS.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "ProgressTreeLogging", targets: ["ProgressTreeLogging"]),
        .executable(name: "logged-import", targets: ["logged-import"]),
    ],
    dependencies: [
        // Named: a path dependency's identity is otherwise its folder's name, which differs between clones.
        .package(name: "ProgressTree", path: "../.."),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .target(
            name: "ProgressTreeLogging",
            dependencies: [
                .product(name: "ProgressTree", package: "ProgressTree"),
                .product(name: "ProgressTreeTerminal", package: "ProgressTree"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // A small import that logs each photo's decisions through swift-log while the tree is live.
        .executableTarget(
            name: "logged-import",
            dependencies: [
                "ProgressTreeLogging",
                .product(name: "ProgressTree", package: "ProgressTree"),
                .product(name: "ProgressTreeTerminal", package: "ProgressTree"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // Depends on the example so that it is built before the tests that run it.
        .testTarget(
            name: "ProgressTreeLoggingTests",
            dependencies: [
                "ProgressTreeLogging", "logged-import",
                .product(name: "ProgressTree", package: "ProgressTree"),
                .product(name: "ProgressTreeTerminal", package: "ProgressTree"),
                .product(name: "Logging", package: "swift-log"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
