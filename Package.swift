// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Dally",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "dally", targets: ["dally"]),
        // The Swift client library for apps: rows typed through Codable, the changes feed,
        // objects, sync, conflicts, stats and uplinks.
        .library(name: "DallyClient", targets: ["DallyClient"]),
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
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.34.1"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.29.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
    ],
    targets: [
        // System libraries: zstd (request and response bodies, default) and zlib (deflate fallback).
        .systemLibrary(name: "CZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // Whole-body compression and bounded (bomb-safe) decompression over those libraries.
        .target(name: "DallyCompression", dependencies: ["CZstd", "CZlib"]),
        // Domain values and rules: schemas, rows, ids, policies, error codes. Pure, no I/O.
        .target(name: "DallyCore"),
        // Large objects as values: content hashes (SHA-256), references, manifests, chunking,
        // byte ranges. Pure, no I/O.
        .target(
            name: "DallyObjects",
            dependencies: [
                "DallyCore",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // TOML → validated configuration values. Shared by the gateway and (later) the cloud.
        .target(
            name: "DallyConfig",
            dependencies: [
                "DallyCore",
                .product(name: "TOMLKit", package: "TOMLKit"),
            ]
        ),
        // The delay-tolerant scheduler: when to wake which uplink, from deadlines, policies and
        // availability. Pure, no I/O, no clock of its own.
        .target(name: "DallyScheduler"),
        // The gateway ↔ cloud protocol: wire formats, conflict rule, the cloud store's interface. Pure.
        .target(name: "DallySync", dependencies: ["DallyCore", "DallyObjects"]),
        // SQLite through GRDB: the gateway's replica (outbox, cursors, group commit, sync in
        // bounded pieces), the chunk store, and the SQLite pieces the cloud's store shares.
        .target(
            name: "DallyStore",
            dependencies: [
                "DallyCompression",
                "DallyCore",
                "DallyObjects",
                "DallySync",
                .product(name: "GRDB", package: "GRDB.swift"),
                // The SQLite C API, for binding a row's values straight to a prepared statement.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The cloud's embedded primary copy in SQLite: SQLiteCloudStore behind the CloudStore
        // interface (batches applied once, versions, conflicts, pages, dictionaries, objects).
        .target(
            name: "DallyCloudStore",
            dependencies: [
                "DallyCore",
                "DallyObjects",
                "DallyStore",
                "DallySync",
                .product(name: "GRDB", package: "GRDB.swift"),
                // The SQLite C API, for the current row read once a change.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The cloud's primary copy in PostgreSQL, for several `dally cloud` nodes over one
        // database: PostgresCloudStore behind the same CloudStore interface, with notify across
        // nodes through LISTEN/NOTIFY.
        .target(
            name: "DallyCloudPostgres",
            dependencies: [
                "DallyConfig",
                "DallyCore",
                "DallyObjects",
                "DallySync",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                // For ConnectionPoolError, which PostgresClient passes on as it is.
                .product(name: "_ConnectionPoolModule", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // A failed HTTP exchange told in words, and a refused connection tried once more, for
        // the sync engine's uplinks and the client library alike.
        .target(
            name: "DallyHTTPClientErrors",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // The gateway's sync engine: the decision loop on the scheduler, sync cycles, the object
        // uploader and fetcher, the notify and probe loops, dictionaries, the cloud client.
        .target(
            name: "DallySyncEngine",
            dependencies: [
                "DallyHTTPClientErrors",
                "DallyCompression",
                "DallyConfig",
                "DallyCore",
                "DallyObjects",
                "DallyScheduler",
                "DallyStore",
                "DallySync",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // Where logs go: standard error, as text or JSON lines (`server.log_format`).
        .target(
            name: "DallyLogging",
            dependencies: ["DallyCore", .product(name: "Logging", package: "swift-log")]
        ),
        // What the gateway's and the cloud's HTTP layers share: error mapping, JSON responses,
        // strict query parsing, request counting, disconnect watching.
        .target(
            name: "DallyHTTP",
            dependencies: [
                "DallyCompression",
                "DallyCore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        // The gateway: HTTP API, ChangeHub long-poll fan-out, stats; wires the store, the sync
        // engine and the server as services.
        .target(
            name: "DallyGateway",
            dependencies: [
                "DallyCompression",
                "DallyCore",
                "DallyObjects",
                "DallyHTTP",
                "DallySync",
                "DallyConfig",
                "DallyScheduler",
                "DallyStore",
                "DallySyncEngine",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // The cloud: the primary copy's HTTP API (batches, downstream pages, notify), stats.
        .target(
            name: "DallyCloud",
            dependencies: [
                "DallyCompression",
                "DallyCore",
                "DallyObjects",
                "DallyConfig",
                "DallyHTTP",
                "DallyStore",
                "DallyCloudStore",
                "DallyCloudPostgres",
                "DallySync",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The client library: what an app links. AsyncHTTPClient behind the `DallyTransport`
        // seam (no NIO type in its public API); DallyCore for the one copy of the error codes,
        // DallyObjects for SHA-256 (swift-crypto: CryptoKit on Apple platforms).
        .target(
            name: "DallyClient",
            dependencies: [
                "DallyCore",
                "DallyHTTPClientErrors",
                "DallyObjects",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // What `dally client` needs beside the library: output as JSON lines or tables, exit
        // codes, the progress bar, batch files.
        .target(name: "DallyClientCLI", dependencies: ["DallyClient", "DallyCore", "DallyLogging"]),
        // The command line: `dally gateway`, `dally cloud`, `dally dev`. No benchmark code.
        .executableTarget(
            name: "dally",
            dependencies: [
                "DallyCloud",
                "DallyConfig",
                "DallyGateway",
                "DallyStore",
                "DallyCloudStore",
                "DallyClient",
                "DallyClientCLI",
                "DallyCloudPostgres",
                "DallyCore",
                "DallyHTTPClientErrors",
                "DallyLogging",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The benchmarks, a separate executable that never ships: `dally-bench apply|propagation|
        // frugal|codec|objects|chunking`, one folder per benchmark (`swift build -c release
        // --product dally-bench`: SwiftPM gives an executable target its own product).
        .executableTarget(
            name: "dally-bench",
            dependencies: [
                "DallyClocks",
                "DallyCloud",
                "DallyCloudPostgres",
                "DallyCompression",
                "DallyCore",
                "DallyConfig",
                "DallyFrugal",
                "DallyGateway",
                "DallyLogging",
                "DallyObjects",
                "DallyStore",
                "DallyCloudStore",
                "DallySync",
                "DallySyncEngine",
                "DallyTestSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Sources/DallyBench"
        ),
        // Clocks besides the system's: one moved by hand, for tests and the frugality benchmark's simulated hour.
        .target(name: "DallyClocks", dependencies: ["DallyCore"]),
        // The frugality benchmark's parts: the seeded trace, the radio model, the floors, the
        // byte-counting TCP relay, staleness, the baselines' bodies and the report table. Only
        // `dally-bench` and tests depend on it.
        .target(
            name: "DallyFrugal",
            dependencies: [
                "DallyCompression",
                "DallyCore",
                "DallyObjects",
                "DallySync",
                "DallyTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // What tests and `dally-bench` share, never the shipped `dally`: seeded test data, one
        // config builder for a cloud and its gateways, one harness that runs them live, one
        // service runner. Only test targets, `dally-bench` and its DallyFrugal depend on it.
        .target(
            name: "DallyTestSupport",
            dependencies: [
                "DallyCloud",
                "DallyConfig",
                "DallyCore",
                "DallySync",
                "DallyGateway",
                "DallyObjects",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "DallyClientTests",
            dependencies: [
                "DallyClient",
                "DallyClientCLI",
                "DallyCloud",
                "DallyConfig",
                "DallyCore",
                "DallyGateway",
                "DallyObjects",
                "DallyTestSupport",
            ]
        ),
        .testTarget(name: "DallyCompressionTests", dependencies: ["DallyCompression", "DallyCore"]),
        .testTarget(name: "DallyCoreTests", dependencies: ["DallyCore"]),
        .testTarget(name: "DallyObjectsTests", dependencies: ["DallyObjects", "DallyCore", "DallyTestSupport"]),
        .testTarget(name: "DallyConfigTests", dependencies: ["DallyConfig", "DallyTestSupport"]),
        .testTarget(name: "DallyLoggingTests", dependencies: ["DallyLogging"]),
        .testTarget(
            name: "DallyStoreTests",
            dependencies: [
                "DallyStore", "DallyCloudStore", "DallyConfig", "DallyObjects", "DallyClocks", "DallySync",
                "DallyTestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]),
        // The cloud store contract: the same tests against SQLite and PostgreSQL (a throwaway
        // cluster per test process, see PostgresCluster).
        .testTarget(
            name: "DallyCloudStoreTests",
            dependencies: [
                "DallyClocks", "DallyCloudStore", "DallyCloudPostgres", "DallyConfig", "DallyCore", "DallyObjects",
                "DallyStore", "DallySync", "DallyTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]),
        .testTarget(name: "DallySyncTests", dependencies: ["DallySync", "DallyCore"]),
        .testTarget(
            name: "DallySyncEngineTests",
            dependencies: [
                "DallySyncEngine", "DallyCompression", "DallyConfig", "DallyCore", "DallyObjects", "DallyStore",
                "DallySync", "DallyClocks", "DallyHTTPClientErrors", "DallyTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]),
        .testTarget(name: "DallySchedulerTests", dependencies: ["DallyScheduler", "DallyCore"]),
        .testTarget(name: "DallyFrugalTests", dependencies: ["DallyFrugal", "DallyCore"]),
        .testTarget(
            name: "DallyGatewayTests",
            dependencies: [
                "DallyCompression",
                "DallyGateway",
                "DallyObjects",
                "DallySync",
                "DallyConfig",
                "DallyStore",
                "DallySyncEngine",
                "DallyClocks",
                "DallyCore",
                "DallyTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "DallySyncEndToEndTests",
            dependencies: [
                "DallyCloud",
                "DallyCompression",
                "DallyConfig",
                "DallyCore",
                "DallyGateway",
                "DallyObjects",
                "DallyScheduler",
                "DallyStore",
                "DallyCloudStore",
                "DallySync",
                "DallyClocks",
                "DallyFrugal",
                "DallyTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
