// swift-tools-version: 6.1
import PackageDescription

// ProgressTreePostgres: jobs' progress trees kept in PostgreSQL (`Docs/JobsOnPostgreSQL.md`): a worker
// publishes its job's tree there, any instance of the application serves that job's page and event stream
// from there, and commands travel back through it. A package of its own, on PostgresNIO, so that the root
// package keeps no dependencies. (Tools 6.1: PostgresNIO's own manifest asks for it.)
let package = Package(
    name: "ProgressTreePostgres",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .visionOS(.v2)],
    products: [
        .library(name: "ProgressTreePostgres", targets: ["ProgressTreePostgres"]),
        .executable(name: "jobs-on-postgres", targets: ["jobs-on-postgres"]),
        .executable(name: "jobs-load-bench", targets: ["jobs-load-bench"]),
    ],
    dependencies: [
        // Named: a path dependency's identity is otherwise its folder's name, which differs between clones.
        .package(name: "ProgressTree", path: "../.."),
        .package(name: "ProgressTreeWeb", path: "../ProgressTreeWeb"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // Already in ProgressTreeWeb's and PostgresNIO's graphs: named for the routes and the logs.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        .target(
            name: "ProgressTreePostgres",
            dependencies: [
                .product(name: "ProgressTree", package: "ProgressTree"),
                .product(name: "ProgressTreeStreaming", package: "ProgressTree"),
                .product(name: "ProgressTreeWeb", package: "ProgressTreeWeb"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),
        // A worker, or an instance of a web application, of jobs kept in PostgreSQL:
        // `jobs-on-postgres worker --postgres URL` and `jobs-on-postgres serve --postgres URL --port 0`.
        .executableTarget(
            name: "jobs-on-postgres",
            dependencies: [
                "ProgressTreePostgres", .product(name: "ProgressTree", package: "ProgressTree"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The worker side of the load benchmark (Benchmarks/load.sh): many jobs, every node changing.
        .executableTarget(
            name: "jobs-load-bench",
            dependencies: ["ProgressTreePostgres", .product(name: "ProgressTree", package: "ProgressTree")]),
        .testTarget(
            name: "ProgressTreePostgresTests",
            dependencies: [
                "ProgressTreePostgres", .product(name: "ProgressTree", package: "ProgressTree"),
                .product(name: "ProgressTreeStreaming", package: "ProgressTree"),
                .product(name: "ProgressTreeWeb", package: "ProgressTreeWeb"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
