// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Dally",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "dally", targets: ["dally"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/LebJe/TOMLKit.git", from: "0.6.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
    ],
    targets: [
        // Domain values and rules: schemas, rows, ids, policies, error codes. Pure, no I/O.
        .target(name: "DallyCore"),
        // TOML → validated configuration values. Shared by the gateway and (later) the cloud.
        .target(
            name: "DallyConfig",
            dependencies: [
                "DallyCore",
                .product(name: "TOMLKit", package: "TOMLKit"),
            ]
        ),
        // The local replica: SQLite through GRDB, outbox, cursors, group commit.
        .target(
            name: "DallyStore",
            dependencies: [
                "DallyCore",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The gateway: HTTP API, ChangeHub long-poll fan-out, stats, wiring as services.
        .target(
            name: "DallyGateway",
            dependencies: [
                "DallyCore",
                "DallyConfig",
                "DallyStore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // The command line: `dally gateway`, later `cloud`, `dev`, `client`, `bench`.
        .executableTarget(
            name: "dally",
            dependencies: [
                "DallyCore",
                "DallyConfig",
                "DallyGateway",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .testTarget(name: "DallyCoreTests", dependencies: ["DallyCore"]),
        .testTarget(name: "DallyConfigTests", dependencies: ["DallyConfig"]),
        .testTarget(name: "DallyStoreTests", dependencies: ["DallyStore", "DallyConfig"]),
        .testTarget(
            name: "DallyGatewayTests",
            dependencies: [
                "DallyGateway",
                "DallyConfig",
                "DallyStore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
