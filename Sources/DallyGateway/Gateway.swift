import DallyHTTP
import DallyConfig
import DallyCore
import DallyObjects
import DallyStore
import DallySyncEngine
import Foundation
import Hummingbird
import Logging
import Prometheus
import ServiceLifecycle

/// A running gateway's parts, wired from a ``GatewayConfig``: the replica, the chunk store and
/// object GC, the change hub and the HTTP application.
///
/// For example, to serve until SIGTERM:
///
/// ```swift
/// let gateway = try Gateway(config: try GatewayConfig.load(path: "config/gateway.toml"), logger: logger)
/// try await gateway.run()
/// ```
public struct Gateway {
    public let config: GatewayConfig
    public let store: ReplicaStore
    /// The chunk store, receives under way and object counters.
    public let objects: GatewayObjects
    public let hub: ChangeHub
    public let openFiles: OpenFileLimit
    /// Sends and receives changes when the configuration has a `[cloud]` section.
    public let syncer: (any SyncControl & Service)?
    let router: Router<DallyRequestContext>
    /// The TLS certificate when `[server]` names one; reloaded on SIGHUP.
    let certificates: ServerCertificates?
    let logger: Logger
    /// Object GC every `objects.gc_interval`.
    let objectCollection: any Service
    let compaction: any Service

    /// Opens the replica and builds the routes.
    ///
    /// - Parameters:
    ///   - clock: what the long-polls and the scheduler sleep on.
    ///   - now: wall-clock milliseconds since 1970, for what outlives the process (first-dirty
    ///     times, deadlines, pulls, object and chunk ages). Tests move it with their clock.
    ///   - objectFetcher: brings objects a client reads that are not here from the cloud;
    ///     defaults to the sync engine when there is one. Without one such reads are answered
    ///     `503 object_unavailable`.
    ///   - chunking: how received objects are cut into chunks.
    /// - Throws: ``StoreError`` when the replica cannot be opened or migrated.
    public init<C: Clock>(
        config: GatewayConfig, logger: Logger, clock: C = ContinuousClock(),
        now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) },
        objectFetcher: (any ObjectFetching)? = nil, chunking: ChunkingParameters = .default
    ) throws where C.Duration == Duration {
        self.config = config
        self.logger = logger
        openFiles = OpenFileLimit.raise()
        let store = try ReplicaStore.open(
            directory: config.server.dataDirectory, tables: FeedColumns.schemas(config),
            synchronousFull: config.store.synchronousFull, syncPieceRows: config.store.syncPieceRows,
            minFreeBytes: config.store.minFreeBytes, maxBytes: config.store.maxBytes, now: now)
        self.store = store
        let objects = try GatewayObjects(
            store: store, settings: config.objects, chunking: chunking, synchronousFull: config.store.synchronousFull)
        self.objects = objects
        objectCollection = RecurringPass("object collection", every: config.objects.gcInterval, clock: clock, logger: logger) {
            let report = try await objects.collect(now: now())
            guard report != ObjectCollector.Report() else { return }
            logger.info(
                "object GC",
                metadata: ["objects": "\(report.objects)", "chunks": "\(report.chunks)", "bytes": "\(report.chunkBytes)"])
        }
        compaction = RecurringPass("compaction", every: config.store.compactInterval, clock: clock, logger: logger) {
            let report = try await store.compact(now: now())
            guard !report.isEmpty else { return }
            logger.info(
                "compaction",
                metadata: [
                    "tombstones": "\(report.tombstonesPurged.values.reduce(0, +))",
                    "retained": "\(report.retainedRemoved.values.reduce(0, +))",
                ])
        }
        let hub = ChangeHub(
            latest: store.latestSeqByTable, limit: openFiles.maxWaiters(configured: config.limits.maxWaiters), clock: clock)
        self.hub = hub
        store.observeCommits { hub.publish($0) }
        let syncer: (any SyncControl & Service)? = try config.cloud.map {
            try SyncEngine(
                store: store, link: $0, uplinks: config.uplinks, networkClasses: config.networkClasses,
                tables: config.tables, chunks: objects.chunkStore, intakes: objects.intakes,
                fetchTimeout: config.objects.fetchTimeout, clock: clock, now: now, logger: logger)
        }
        self.syncer = syncer
        for table in config.tablesWithoutUplink() {
            logger.warning(
                "no uplink may carry this table's changes; they wait in the outbox until the configuration adds one",
                metadata: ["table": "\(table)"])
        }

        let registry = PrometheusCollectorRegistry()
        let requests = RequestCounter(registry: registry)
        let authorizer = Authorizer(config: config)
        let access = TableAccess(store: store, authorizer: authorizer, maxBodyBytes: config.limits.maxBodyBytes)
        certificates = try config.server.tls.map { files in
            try ServerCertificates(certificate: files.certificate, key: files.key, clientCA: config.server.tlsClientCA)
        }
        // HEAD wherever GET is: its answer's head, without the body.
        let router = Router(context: DallyRequestContext.self, options: .autoGenerateHeadEndpoints)
        router.middlewares.add(RequestCountingMiddleware(counter: requests))
        // Outside the error middleware, so that the pages of an allowed origin read errors too.
        if !config.server.corsOrigins.isEmpty {
            router.middlewares.add(CORSPolicy<DallyRequestContext>(origins: config.server.corsOrigins))
        }
        let methods = RouteMethods()
        router.middlewares.add(ErrorMiddleware(bodyLimit: config.limits.maxBodyBytes, routes: methods))
        RowRoutes(access: access).register(on: router)
        let receiver = ObjectReceiver(
            chunks: objects.chunkStore, intakes: objects.intakes, counters: objects.counters,
            maxBytes: config.objects.maxBytes, chunking: chunking, now: now,
            room: { () throws(DallyError) in try store.requireRoomForLocalWrites() })
        ObjectRoutes(
            access: access, receiver: receiver, chunks: objects.chunkStore,
            fetcher: objectFetcher ?? (syncer as? any ObjectFetching)
        ).register(on: router)
        ObjectUploadRoute(authorizer: authorizer, store: store, receiver: receiver).register(on: router)
        BatchRoute(access: access, maxRows: config.limits.maxRowsPerBatch).register(on: router)
        TinySyncRoute(
            access: access, maxRows: config.limits.maxRowsPerBatch, maxAnswerRows: TinySyncRoute.defaultMaxAnswerRows
        ).register(on: router)
        SyncRoutes(access: access, syncer: syncer).register(on: router)
        UplinkRoutes(authorizer: authorizer, syncer: syncer).register(on: router)
        FeedRoutes(
            access: access, hub: hub, pageCache: SharedLoads(), maxPageRows: config.limits.maxPageRows,
            maxWait: config.limits.maxWait
        ).register(on: router)
        OperationsRoutes(
            authorizer: authorizer,
            stats: GatewayStats(
                store: store, objects: objects, hub: hub, syncer: syncer, requests: requests, registry: registry,
                counters: CounterExport(registry: registry), openFiles: openFiles, startedAt: now(), now: now)
        ).register(on: router)
        methods.learn(router.routes.map { ($0.path, $0.method) })
        self.router = router
    }

    /// The HTTP application, for running inside a larger service group or in tests.
    ///
    /// - Parameter port: overrides the configured port (0 picks a free one).
    public func application(
        port: Int? = nil, onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        Application(
            router: router,
            server: .dally(
                tls: certificates, keepaliveTimeout: config.server.keepaliveTimeout,
                bodyTimeout: config.server.bodyTimeout),
            configuration: .init(
                address: .hostname(config.server.host, port: port ?? config.server.port),
                serverName: "dally",
                backlog: config.server.backlog
            ),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger
        )
    }

    /// The services of a running gateway, in start order: the server, the hub, object GC, the
    /// syncer.
    ///
    /// Shutdown runs in reverse: the sync engine stops first (a batch in flight stays recorded and
    /// is resent at the next start), GC stops between passes, then the hub answers every
    /// parked long-poll, then the server drains in-flight requests.
    ///
    /// - Parameter port: overrides the configured port (0 picks a free one).
    public func services(port: Int? = nil, onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in })
        -> [any Service]
    {
        let app = application(port: port, onServerRunning: onServerRunning)
        let reloader = certificates.map { CertificateReloader(certificates: $0, logger: logger) }
        return [app, hub, objectCollection, compaction] + (syncer.map { [$0] } ?? []) + (reloader.map { [$0] } ?? [])
    }

    /// Logs where the gateway listens; for `onServerRunning`.
    public var announce: @Sendable (Int) async -> Void {
        let (logger, config, hub, openFiles) = (self.logger, self.config, self.hub, self.openFiles)
        return { port in
            logger.info(
                "gateway listening",
                metadata: [
                    "version": "\(DallyVersion.current)",
                    "address": "\(config.server.host):\(port)", "tls": "\(config.server.tls != nil)", "data_dir": "\(config.server.dataDirectory)",
                    "tables": "\(config.tables.count)", "max_waiters": "\(hub.limit)",
                    "open_files": "\(openFiles.soft)/\(openFiles.hard)",
                    "cloud": "\(config.cloud.map { "\($0.url) as \($0.gatewayID)" } ?? "none")",
                ])
        }
    }

    /// Closes the replica and the chunk store; for a gateway whose services have stopped.
    public func close() throws {
        try objects.chunkStore.close()
        try store.close()
    }

    /// Serves until SIGTERM or SIGINT, then stops syncing, answers every long-poll, drains
    /// requests and closes the replica.
    public func run() async throws {
        let group = ServiceGroup(
            configuration: .init(
                services: services(onServerRunning: announce), gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        do {
            try await group.run()
        } catch {
            logger.error("gateway stopped", metadata: ["reason": "error", "error": "\(error)"])
            try? close()
            throw error
        }
        try close()
        logger.info("gateway stopped", metadata: ["reason": "shutdown signal (SIGTERM or SIGINT)"])
    }
}
