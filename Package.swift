// swift-tools-version: 6.0
import PackageDescription

// ProgressTree has no package dependencies: only the toolchain's own modules
// (Swift, Synchronization, Dispatch and, where needed, Foundation). Modules, from the bottom: the platform
// layer (ProgressTreePlatform, internal), the model (ProgressTree), then presentation, Foundation interop,
// streaming and the terminal.

// The core's invariants checked by code (`checkInvariants()`, Sources/ProgressTree/Core/ProgressNode+Invariants.swift),
// as swift-collections does with COLLECTIONS_INTERNAL_CHECKS: compiled into debug builds of the library and
// its tests when PROGRESSTREE_INTERNAL_CHECKS is set (not to 0) in the environment of the build, as in
// `PROGRESSTREE_INTERNAL_CHECKS=1 swift test`; never into a release build.
let internalChecks: [SwiftSetting] =
    ["", "0"].contains(Context.environment["PROGRESSTREE_INTERNAL_CHECKS"] ?? "")
    ? [] : [.define("PROGRESSTREE_INTERNAL_CHECKS", .when(configuration: .debug))]

let package = Package(
    name: "ProgressTree",
    // `Synchronization` (Mutex, Atomic) sets the floor on Apple platforms. Supported: Linux and macOS, iOS and
    // visionOS; on tvOS and watchOS the model, Presentation and Foundation modules are meant to build, not
    // ProgressTreeStreaming (it starts processes with fork) nor the terminal, which depends on it; see
    // README.md, "Requirements".
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "ProgressTree", targets: ["ProgressTree"]),
        .library(name: "ProgressTreePresentation", targets: ["ProgressTreePresentation"]),
        .library(name: "ProgressTreeStreaming", targets: ["ProgressTreeStreaming"]),
        .library(name: "ProgressTreeTerminal", targets: ["ProgressTreeTerminal"]),
        .library(name: "ProgressTreeFoundation", targets: ["ProgressTreeFoundation"]),
        .executable(name: "photo-import", targets: ["photo-import"]),
        .executable(name: "file-copy", targets: ["file-copy"]),
        .executable(name: "step-flow", targets: ["step-flow"]),
        .executable(name: "message-feed", targets: ["message-feed"]),
        .executable(name: "loading-rows", targets: ["loading-rows"]),
        .executable(name: "fetch", targets: ["fetch"]),
    ],
    targets: [
        // What is not the model, shared by the modules of the package (not a product): `Lock`, the
        // `DeliveryGate` every user handler passes, threads, the process's symbols, Duration arithmetic, and
        // the C library's calls of every module: descriptors, signals, terminals, processes, sockets,
        // polling. The one module of the package that imports the C library.
        .target(name: "ProgressTreePlatform", dependencies: ["CProgressTreePlatform"]),
        // The calls Swift cannot make, or not alike on every C library (fork and prctl between them, epoll,
        // peer credentials, sockets made close-on-exec, a signal's disposition): C, no Swift.
        .target(name: "CProgressTreePlatform"),
        .target(name: "ProgressTree", dependencies: ["ProgressTreePlatform"], swiftSettings: internalChecks),
        // Label pacing and step flows: no `ProgressNode` in their API, so no model: the platform module
        // gives them `DeliveryGate` (one gate for observation and pacer handlers) and `Lock`.
        .target(name: "ProgressTreePresentation", dependencies: ["ProgressTreePlatform"]),
        // Publishing and mounting across processes: the wire format's reader, publishers, mounts, listeners
        // (their sockets and processes through the platform module). The model keeps what is pure: a node's
        // line and the walker that decides what a writer writes (also used by the terminal's json mode).
        .target(name: "ProgressTreeStreaming", dependencies: ["ProgressTree", "ProgressTreePlatform"]),
        // Depends on ProgressTreeStreaming for `PROGRESSTREE_FD` (a renderer started by a mounting parent
        // publishes instead of drawing) and to print a mounted program's output lines.
        .target(
            name: "ProgressTreeTerminal",
            dependencies: ["ProgressTree", "ProgressTreePlatform", "ProgressTreeStreaming"]),
        // `Foundation.Progress` as a child of a node, and a node as a `Foundation.Progress`: the whole of
        // Foundation, which the model keeps out (it uses `FoundationEssentials`). Depends on the model's
        // package-level `ThreadScopeCompanion` for Foundation children of current nodes.
        .target(name: "ProgressTreeFoundation", dependencies: ["ProgressTree"]),
        // MARK: Examples
        .target(
            name: "ExampleSupport", dependencies: ["ProgressTree", "ProgressTreeTerminal"],
            path: "Examples/ExampleSupport"),
        .executableTarget(
            name: "photo-import",
            dependencies: [
                "ProgressTree", "ProgressTreePlatform", "ProgressTreeStreaming", "ProgressTreeTerminal",
                "ExampleSupport",
            ],
            path: "Examples/photo-import"),
        .executableTarget(
            name: "file-copy",
            dependencies: [
                "ProgressTree", "ProgressTreePlatform", "ProgressTreePresentation", "ProgressTreeTerminal",
                "ExampleSupport",
            ],
            path: "Examples/file-copy"),
        .executableTarget(
            name: "step-flow",
            dependencies: ["ProgressTree", "ProgressTreePresentation", "ProgressTreeTerminal", "ExampleSupport"],
            path: "Examples/step-flow"),
        .executableTarget(
            name: "message-feed",
            dependencies: ["ProgressTree", "ProgressTreePresentation", "ProgressTreeTerminal", "ExampleSupport"],
            path: "Examples/message-feed"),
        .executableTarget(
            name: "loading-rows", dependencies: ["ProgressTree", "ProgressTreeTerminal", "ExampleSupport"],
            path: "Examples/loading-rows"),
        .executableTarget(
            name: "fetch",
            dependencies: ["ProgressTree", "ProgressTreeFoundation", "ProgressTreeTerminal", "ExampleSupport"],
            path: "Examples/fetch"),
        // What a line of the wire format costs each side, in one process (not a product: a measuring tool).
        .executableTarget(
            name: "wire-cost", dependencies: ["ProgressTree", "ProgressTreeStreaming"], path: "Tools/wire-cost"),
        // The cross-machine test of a mount over HTTP (Tests/cross-machine/http-mount.sh, run by .ci/run): a
        // server of scripted Server-Sent Events run in a network namespace, and a program that mounts it by
        // URL through a reverse proxy. Not products: test programs.
        .executableTarget(
            name: "sse-test-server", dependencies: ["ProgressTree", "ProgressTreePlatform", "TestSupport"],
            path: "Tests/cross-machine/sse-test-server"),
        .executableTarget(
            name: "http-mount-probe", dependencies: ["ProgressTree", "ProgressTreeStreaming"],
            path: "Tests/cross-machine/http-mount-probe"),
        // What several test targets share: the guides' Swift blocks, a model of a terminal screen, an HTTP
        // server on 127.0.0.1, a server of Server-Sent Events.
        .target(
            name: "TestSupport", dependencies: ["ProgressTree", "ProgressTreePlatform", "ProgressTreeTerminal"],
            path: "Tests/TestSupport"),
        .testTarget(
            name: "ProgressTreeTests", dependencies: ["ProgressTree", "ProgressTreePlatform", "TestSupport"],
            swiftSettings: internalChecks),
        .testTarget(
            name: "ProgressTreeStreamingTests",
            dependencies: ["ProgressTree", "ProgressTreePlatform", "ProgressTreeStreaming", "TestSupport"]),
        .testTarget(
            name: "ProgressTreePresentationTests",
            dependencies: ["ProgressTree", "ProgressTreePlatform", "ProgressTreePresentation"]),
        .testTarget(
            name: "ProgressTreeTerminalTests",
            dependencies: [
                "ProgressTree", "ProgressTreePlatform", "ProgressTreeStreaming", "ProgressTreeTerminal", "TestSupport",
            ]),
        .testTarget(
            name: "ProgressTreeFoundationTests",
            dependencies: ["ProgressTree", "ProgressTreePlatform", "ProgressTreeFoundation", "TestSupport"]),
        // Runs the built examples (the executables must be built: it depends on them), and the guides'
        // snippets as programs, compiled against the built library modules.
        .testTarget(
            name: "ExampleTests",
            dependencies: [
                "file-copy", "photo-import", "step-flow", "message-feed", "loading-rows", "fetch", "ProgressTree",
                "ProgressTreePlatform", "ProgressTreePresentation", "ProgressTreeStreaming", "ProgressTreeTerminal",
                "ProgressTreeFoundation",
                "TestSupport",
            ]),
    ],
    swiftLanguageModes: [.v6]
)
