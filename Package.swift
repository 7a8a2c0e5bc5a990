// swift-tools-version: 6.0
import PackageDescription

// ProgressTree has no package dependencies: only the toolchain's own modules
// (Swift, Synchronization, Dispatch and, where needed, Foundation).
let package = Package(
    name: "ProgressTree",
    // `Synchronization` (Mutex, Atomic) sets the floor on Apple platforms.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "ProgressTree", targets: ["ProgressTree"]),
        .library(name: "ProgressTreeTerminal", targets: ["ProgressTreeTerminal"]),
        .executable(name: "photo-import", targets: ["photo-import"]),
    ],
    targets: [
        .target(name: "ProgressTree"),
        .target(name: "ProgressTreeTerminal", dependencies: ["ProgressTree"]),
        .executableTarget(
            name: "photo-import", dependencies: ["ProgressTree", "ProgressTreeTerminal"], path: "Examples/photo-import"),
        .testTarget(name: "ProgressTreeTests", dependencies: ["ProgressTree"]),
        .testTarget(name: "ProgressTreeTerminalTests", dependencies: ["ProgressTree", "ProgressTreeTerminal"]),
    ],
    swiftLanguageModes: [.v6]
)
