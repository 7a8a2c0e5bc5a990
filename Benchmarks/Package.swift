// swift-tools-version: 6.1
import PackageDescription

// The benchmarks live in their own package so that ProgressTree itself keeps zero dependencies (the layout
// swift-nio uses). `swift package benchmark` runs the package-benchmark suite (wall clock, malloc counts,
// thresholds in Thresholds/); `./compare.sh` prints the side-by-side table against Foundation's `Progress`;
// `./smoke.sh` is the quick pass CI runs.

// The library under test: the enclosing package by default, or another checkout of it, for A/B runs of a
// design change or to measure a pinned commit: `PROGRESSTREE_ROOT=/path/to/checkout ./compare.sh`.
let rootPackagePath = Context.environment["PROGRESSTREE_ROOT"].flatMap { $0.isEmpty ? nil : $0 } ?? "../"

// SwiftPM identifies a path dependency by its directory name, which is whatever the checkout is called
// (`ProgressTree`, `progresstree`, `main`, ...), so derive it rather than hard-code it.
let rootPackageIdentity: String = {
    let directory = rootPackagePath == "../" ? Context.packageDirectory + "/.." : rootPackagePath
    var components: [Substring] = []
    for component in directory.split(separator: "/") where component != "." {
        if component == ".." { _ = components.popLast() } else { components.append(component) }
    }
    return components.last.map(String.init) ?? "ProgressTree"
}()

let package = Package(
    name: "ProgressTreeBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: rootPackagePath),
        .package(
            url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // The scenarios, written once and run by both executables below.
        .target(
            name: "Scenarios",
            dependencies: [
                .product(name: "ProgressTree", package: rootPackageIdentity),
                .product(name: "ProgressTreeTerminal", package: rootPackageIdentity),
            ],
            path: "Sources/Scenarios"
        ),
        // Side-by-side table (ContinuousClock timings): `swift run -c release ProgressTreeCompare`.
        .executableTarget(
            name: "ProgressTreeCompare",
            dependencies: [
                "Scenarios", .product(name: "ProgressTreeStreaming", package: rootPackageIdentity),
                .product(name: "ProgressTreeTerminal", package: rootPackageIdentity),
            ],
            path: "Sources/ProgressTreeCompare"
        ),
        // package-benchmark suite: wall clock, malloc counts and memory, with p90 thresholds.
        .executableTarget(
            name: "ProgressTreeBenchmarks",
            dependencies: [
                "Scenarios",
                .product(name: "ProgressTree", package: rootPackageIdentity),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/ProgressTreeBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
