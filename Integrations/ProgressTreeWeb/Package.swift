// swift-tools-version: 6.0
import PackageDescription

// ProgressTreeWeb: a node's tree served over HTTP as Server-Sent Events (`Docs/WireFormat.md`, "Over HTTP"),
// with a page that shows it, on Hummingbird 2 (SwiftNIO). A package of its own, so that the root package
// keeps no dependencies: a program that depends on ProgressTree's products alone resolves and builds no
// other package, and only a program that adds this package gets Hummingbird (see README.md, "A live tree
// in a web page").
let package = Package(
    name: "ProgressTreeWeb",
    // Hummingbird 2 needs macOS 14; the root package's `Synchronization` sets the floor higher.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .visionOS(.v2)],
    products: [
        .library(name: "ProgressTreeWeb", targets: ["ProgressTreeWeb"]),
        .executable(name: "web-dashboard", targets: ["web-dashboard"]),
        .executable(name: "web-readers-bench", targets: ["web-readers-bench"]),
        .executable(name: "jobs-app", targets: ["jobs-app"]),
    ],
    dependencies: [
        // Named: a path dependency's identity is otherwise its folder's name, which differs between clones.
        .package(name: "ProgressTree", path: "../.."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        // Already in Hummingbird's graph: named so that the server's logger writes to standard error, and
        // so that the routes can name headers (`HTTPField.Name`), which Hummingbird does not re-export.
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // Also in Hummingbird's graph: stopping the server gracefully (`ServiceGroup.triggerGracefulShutdown`),
        // and ending each reader's stream when the application's does (`withGracefulShutdownHandler`).
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // For the example application only (`jobs-app`): its cookie sessions and bearer tokens. The library
        // does not depend on it: an application's authentication is its own.
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
    ],
    targets: [
        .target(
            name: "ProgressTreeWeb",
            dependencies: [
                .product(name: "ProgressTree", package: "ProgressTree"),
                .product(name: "ProgressTreeStreaming", package: "ProgressTree"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            // The page, in the code: no bundle to find at run time (`PackageResources.index_html`, …).
            resources: [
                .embedInCode("Resources/index.html"), .embedInCode("Resources/dashboard.js"),
                .embedInCode("Resources/dashboard.css"),
            ]),
        // photo-import's job, served: `web-dashboard --port 0` prints its URL first.
        .executableTarget(
            name: "web-dashboard",
            dependencies: [
                "ProgressTreeWeb", .product(name: "ProgressTree", package: "ProgressTree"),
                .product(name: "ProgressTreeStreaming", package: "ProgressTree"),
            ]),
        // A Hummingbird application of its own with background jobs, each job's progress at a path it chooses
        // behind its own authentication (cookie sessions or bearer tokens): `jobs-app --port 0`.
        .executableTarget(
            name: "jobs-app",
            dependencies: [
                "ProgressTreeWeb", .product(name: "ProgressTree", package: "ProgressTree"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdAuth", package: "hummingbird-auth"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // Many readers of one tree: the server's CPU, each change's latency and memory per connection.
        .executableTarget(
            name: "web-readers-bench",
            dependencies: [
                "ProgressTreeWeb", .product(name: "ProgressTree", package: "ProgressTree"),
                .product(name: "ProgressTreeStreaming", package: "ProgressTree"),
            ]),
        // Depends on the examples so that they are built before the tests that run them.
        .testTarget(
            name: "ProgressTreeWebTests",
            dependencies: [
                "ProgressTreeWeb", "web-dashboard", "jobs-app",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ProgressTree", package: "ProgressTree"),
                .product(name: "ProgressTreeStreaming", package: "ProgressTree"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
