import DallyConfig
import DallyCore
import DallyHTTP
import DallyCloudPostgres
import DallyCloudStore
import DallyStore
import DallySync
import Foundation
import Hummingbird
import Logging
import Prometheus
import ServiceLifecycle

/// A running cloud's parts, wired from a ``CloudConfig``: the store, the notify hub, the object
/// collector and the HTTP application.
///
/// ```swift
/// let cloud = try Cloud(config: try CloudConfig.load(path: "config/cloud.toml"), logger: logger)
/// try await cloud.run()
/// ```
public struct Cloud<C: Clock> where C.Duration == Duration {
    public let config: CloudConfig
    public let store: any CloudStore
    public let hub: NotifyHub<C>
    /// Deletes unreferenced objects and chunks, every `objects.gc_interval` as one of
    /// ``services(port:onServerRunning:)``; ``CloudObjectCollector/collect(now:)`` runs a pass now.
    public let collector: CloudObjectCollector
    /// Purges old tombstones every `store.compact_interval` (see ``TombstoneCompaction``);
    /// ``TombstoneCompaction/compact()`` runs a pass now.
    public let compaction: TombstoneCompaction
    /// Upkeep: forgetting stored batch answers older than `batches.keep_answers` (at start,
    /// then hourly) and collecting objects every `objects.gc_interval`.
    let upkeep: [RecurringPass<C>]
    /// Manifests waiting for their last chunks; stopped with the hub, before the server drains.
    let arrivals: ChunkArrivals
    let router: Router<DallyRequestContext>
    /// The TLS certificate when `[server]` names one; reloaded on SIGHUP.
    let certificates: ServerCertificates?
    let logger: Logger

    /// Opens the embedded SQLite store and builds the routes.
    ///
    /// - Parameter now: the wall clock in ms since 1970, stamped on stored chunks and objects
    ///   (for their grace period) and read by the collector; tests move their own.
    /// - Throws: ``StoreError`` when the store cannot be opened or migrated.
    public init(
        config: CloudConfig, logger: Logger, clock: C = ContinuousClock(),
        now: @escaping @Sendable () -> Int64 = Cloud.wallClock
    ) throws {
        let store = try SQLiteCloudStore.open(
            directory: config.server.dataDirectory, tables: config.tables, synchronousFull: config.store.synchronousFull)
        try self.init(config: config, store: store, logger: logger, clock: clock, now: now)
    }

    /// Opens the store `[store] backend` names (SQLite in the data directory, or PostgreSQL,
    /// connecting and migrating it) and builds the routes.
    ///
    /// - Throws: ``StoreError`` when the SQLite store cannot be opened, ``PostgresStoreError``
    ///   when the database cannot be reached or migrated.
    public static func open(
        config: CloudConfig, logger: Logger, clock: C = ContinuousClock(),
        now: @escaping @Sendable () -> Int64 = Cloud.wallClock
    ) async throws -> Cloud {
        switch config.store.backend {
        case .sqlite:
            return try Cloud(config: config, logger: logger, clock: clock, now: now)
        case .postgresql(let settings):
            let store = try await PostgresCloudStore.open(settings, tables: config.tables, logger: logger)
            do {
                return try Cloud(config: config, store: store, logger: logger, clock: clock, now: now)
            } catch {
                try? store.close()
                throw error
            }
        }
    }

    /// How long a stopping cloud waits for requests under way before it cancels them.
    public static var gracefulShutdownLimit: Duration { .seconds(30) }

    /// Milliseconds since 1970 by the system clock.
    public static func wallClock() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    /// Wires the routes over any ``CloudStore``.
    ///
    /// - Throws: when `[server]` names TLS files that cannot be read or do not match.
    public init(
        config: CloudConfig, store: any CloudStore, logger: Logger, clock: C,
        now: @escaping @Sendable () -> Int64 = Cloud.wallClock
    ) throws {
        self.config = config
        self.store = store
        self.logger = logger
        let openFiles = OpenFileLimit.raise()
        let hub = NotifyHub(
            versions: store.versions, limit: min(config.limits.maxWaiters, openFiles.maxWaiters(configured: 0)),
            clock: clock)
        self.hub = hub
        store.observeCommits { hub.publish($0) }

        let registry = PrometheusCollectorRegistry()
        let requests = RequestCounter(registry: registry)
        let counters = CloudCounters(registry: registry)
        let objectCounters = CloudObjectCounters(registry: registry)
        self.collector = CloudObjectCollector(
            store: store, grace: config.objects.gcGrace, interval: config.objects.gcInterval, counters: objectCounters,
            now: now, logger: logger)
        let answers = AnswerKeeper(store: store, keep: config.keepAnswers, now: now, logger: logger)
        let collector = self.collector
        let pages = SharedPages(store: store, counters: counters, now: now)
        let compaction = TombstoneCompaction(
            store: store, tables: config.tables, now: now, logger: logger, purged: { pages.forgetAll() })
        self.compaction = compaction
        self.upkeep = [
            RecurringPass("tombstone compaction", every: config.store.compactInterval, clock: clock, logger: logger) {
                try await compaction.compact()
            },
            RecurringPass("forgetting old batch answers", every: .seconds(3600), atStart: true, clock: clock, logger: logger) {
                try await answers.forgetOld()
            },
            RecurringPass("object collection", every: config.objects.gcInterval, clock: clock, logger: logger) {
                try await collector.collectNow()
            },
        ]
        let authenticator = GatewayAuthenticator(
            gateways: config.gateways, adminToken: config.adminToken, certificates: config.server.tlsClientCA != nil)
        let shelf = DictionaryShelf(store: store)
        certificates = try config.server.tls.map { files in
            try ServerCertificates(certificate: files.certificate, key: files.key, clientCA: config.server.tlsClientCA)
        }
        // Cut or framed chunk and batch bodies share one bound in memory.
        let frames = UploadFrames(partials: PartialUploads())
        let arrivals = ChunkArrivals()
        self.arrivals = arrivals
        // HEAD wherever GET is: its answer's head, without the body.
        let router = Router(context: DallyRequestContext.self, options: .autoGenerateHeadEndpoints)
        router.middlewares.add(RequestCountingMiddleware(counter: requests))
        let methods = RouteMethods()
        router.middlewares.add(ErrorMiddleware(bodyLimit: config.limits.maxBodyBytes, routes: methods))
        let clocks = WriterClockWatch(logger: logger)
        BatchesRoute(
            store: store, authenticator: authenticator,
            limits: .init(
                maxBodyBytes: config.limits.maxBodyBytes, maxDecompressedBytes: config.limits.maxDecompressedBytes,
                maxRowsPerBatch: config.limits.maxRowsPerBatch, maxPageRows: config.limits.maxPageRows),
            counters: counters, shelf: shelf, compaction: compaction, frames: frames, now: now,
            maxClockAheadMs: config.maxClockAhead.milliseconds, clocks: clocks
        ).register(on: router)
        DictionaryRoutes(
            store: store, shelf: shelf, authenticator: authenticator, maxDictionaries: config.limits.maxDictionaries,
            maxDictionaryBytes: config.limits.maxDictionaryBytes, now: now
        ).register(on: router)
        ObjectRoutes(
            store: store, authenticator: authenticator,
            limits: .init(
                maxBodyBytes: config.limits.maxBodyBytes, maxDecompressedBytes: config.limits.maxDecompressedBytes,
                maxObjectBytes: config.objects.maxBytes, maxWait: config.limits.maxWait),
            counters: objectCounters, frames: frames, arrivals: arrivals, clock: clock, now: now
        ).register(on: router)
        DownstreamRoutes(
            store: store, authenticator: authenticator, hub: hub, pages: pages,
            counters: counters, compaction: compaction, clock: clock,
            maxPageRows: config.limits.maxPageRows, maxWait: config.limits.maxWait
        ).register(on: router)
        let fleet = FleetDeclarations(store: store, declared: TableDeclarations(schemas: config.tables))
        try DeclarationsRoute(
            fleet: fleet, authenticator: authenticator,
            limits: .init(maxBodyBytes: config.limits.maxBodyBytes, maxDecompressedBytes: config.limits.maxDecompressedBytes),
            now: now, logger: logger
        ).register(on: router)
        CloudOperationsRoutes(
            store: store, authenticator: authenticator, hub: hub, counters: counters, objectCounters: objectCounters,
            shelf: shelf, compaction: compaction, requests: requests,
            registry: registry, fleet: fleet, configured: config.gateways.map(\.id), startedAt: now(), now: now
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
            // No `Server` header: every answer crosses a gateway's metered link, and 21 bytes an
            // answer that nothing reads are a tenth of a second each at 2 kbit/s.
            configuration: .init(
                address: .hostname(config.server.host, port: port ?? config.server.port), serverName: nil,
                backlog: config.server.backlog),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger
        )
    }

    /// The services of a running cloud, in start order: the server, then the hub and the
    /// manifests' waits (stopped first, so parked notify polls and waiting manifests are
    /// answered before the server drains), then upkeep: forgetting old batch answers and
    /// collecting unreferenced objects.
    public func services(port: Int? = nil, onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in })
        -> [any Service]
    {
        let reloader: [any Service] = certificates.map { [CertificateReloader(certificates: $0, logger: logger)] } ?? []
        return [application(port: port, onServerRunning: onServerRunning), hub, arrivals] + upkeep + reloader
    }

    /// Serves until SIGTERM or SIGINT, then answers every notify long-poll, drains requests and
    /// closes the store.
    public func run() async throws {
        let (logger, config) = (self.logger, self.config)
        let services = services { port in
            logger.info(
                "cloud listening",
                metadata: [
                    "version": "\(DallyVersion.current)",
                    "address": "\(config.server.host):\(port)", "tls": "\(config.server.tls != nil)", "data_dir": "\(config.server.dataDirectory)",
                    "store": "\(config.store.backend.description)",
                    "tables": "\(config.tables.count)", "gateways": "\(config.gateways.count)",
                ])
        }
        var configuration = ServiceGroupConfiguration(
            services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        // A request that never ends (one waiting on a database connection that PostgreSQL's
        // restart left hanging) must not keep a stopping node alive for ever: after this the
        // rest is cancelled, and the node exits.
        configuration.maximumGracefulShutdownDuration = Self.gracefulShutdownLimit
        configuration.maximumCancellationDuration = .seconds(5)
        let group = ServiceGroup(configuration: configuration)
        do {
            try await group.run()
        } catch {
            logger.error("cloud stopped", metadata: ["reason": "error", "error": "\(error)"])
            try? store.close()
            throw error
        }
        try store.close()
        logger.info("cloud stopped", metadata: ["reason": "shutdown signal (SIGTERM or SIGINT)"])
    }
}
