import DallyCore
import DallyHTTP
import DallySync
import Hummingbird
import Prometheus

/// `GET /healthz` and `GET /readyz` (no credentials), `GET /stats` and `GET /metrics` (admin
/// token; ``CloudMetricsExport`` sets the gauges at each scrape).
///
/// `/healthz` says the process serves (a container's liveness: restarting a node whose
/// database is down would not bring the database back); `/readyz` says it can take batches now
/// (a load balancer's readiness: `503 store_unavailable` while the database cannot be reached,
/// `503 shutting_down` while the node stops).
struct CloudOperationsRoutes<C: Clock>: Sendable where C.Duration == Duration {
    let store: any CloudStore
    let authenticator: GatewayAuthenticator
    let hub: NotifyHub<C>
    let counters: CloudCounters
    let objectCounters: CloudObjectCounters
    let shelf: DictionaryShelf
    let compaction: TombstoneCompaction
    let requests: RequestCounter
    let registry: PrometheusCollectorRegistry
    /// What each gateway told it declares, against this node's declarations.
    let fleet: FleetDeclarations
    /// The gateways of `[[gateways]]`: each is listed in `/stats`, seen or not.
    let configured: [String]
    /// When the cloud started, and the clock it reads: ms since 1970.
    let startedAt: Int64
    let now: @Sendable () -> Int64

    func register(on router: Router<DallyRequestContext>) {
        router.get("/healthz") { _, _ in JSONResponse.healthy }
        router.get("/readyz") { _, _ in
            guard !hub.isClosed else { throw DallyError(.shuttingDown, "the cloud is shutting down") }
            try store.requireReachable()
            return JSONResponse.ready
        }
        router.get("/stats") { request, _ in
            try authenticator.requireAdmin(request)
            return try JSONResponse.encoded(try await stats())
        }
        let export = CloudMetricsExport(registry: registry)
        router.get("/metrics") { request, _ in
            try authenticator.requireAdmin(request)
            let versions = store.versions
            export.set(
                .init(
                    versions: versions, purged: compaction.purged,
                    gateways: try await gateways(versions: versions),
                    notifyWaiting: hub.waiting, notifyLimit: hub.limit))
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
        }
    }

    private func gateways(versions: [String: Int64]) async throws -> [(String, CloudStatsDocument.Gateway)] {
        CloudStatsDocument.Gateway.folded(
            try await compaction.cursors(), told: try await fleet.all(), configured: configured, versions: versions,
            at: now())
    }

    /// The `/stats` document (API.md lists every member).
    func stats() async throws -> CloudStatsDocument {
        let statistics = try await store.statistics()
        let chunks = try await store.chunks.totals()
        let counts = counters.snapshot
        let objects = objectCounters.snapshot
        let purged = compaction.purged
        let gateways = try await gateways(versions: statistics.tables.mapValues(\.version))
        return CloudStatsDocument(
            uptimeSeconds: (now() - startedAt) / 1000,
            tables: statistics.tables.sorted { $0.key < $1.key }.map { name, table in
                (
                    name,
                    [
                        ("version", table.version), ("live", table.live), ("tombstones", table.tombstones),
                        ("horizon", table.horizon), ("tombstones_purged", purged[name] ?? 0),
                    ]
                )
            },
            gateways: gateways,
            batches: [
                ("received", counts.batches), ("replayed", counts.replayed), ("rows_accepted", counts.rowsAccepted),
                ("conflicts", counts.conflicts), ("rows_rejected", counts.rejected),
                ("downstream_rows", counts.downstreamRows), ("body_bytes", counts.bodyBytes),
                ("clock_ahead_changes", counts.clockAhead),
            ],
            dictionaries: [("bodies_decoded", shelf.bodiesDecoded), ("in_memory", Int64(shelf.inMemory))],
            objects: [
                ("objects", statistics.objects), ("chunks", Int64(chunks.chunks)), ("chunk_bytes", chunks.bytes),
                ("chunks_received", objects.chunksReceived), ("chunks_deduplicated", objects.chunksDeduplicated),
                ("bytes_deduplicated", objects.bytesDeduplicated), ("manifests_received", objects.manifestsReceived),
                ("manifests_waited", objects.manifestsWaited), ("gc_runs", objects.gcRuns), ("objects_collected", objects.objectsCollected),
                ("chunks_collected", objects.chunksCollected), ("bytes_collected", objects.bytesCollected),
            ],
            notify: [
                ("waiting", Int64(hub.waiting)), ("limit", Int64(hub.limit)), ("page_reads", counts.pageReads),
                ("pages_shared", counts.pagesShared), ("inline_pages", counts.inlinePages),
            ],
            store: [("bytes", statistics.bytesOnDisk), ("stored_answers", statistics.storedAnswers)],
            requests: requests.entries)
    }
}
