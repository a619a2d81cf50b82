import DallyCore
import DallyHTTP
import DallySync
import Foundation
import Hummingbird
import Prometheus

/// `GET /healthz` (no credentials), `GET /stats` and `GET /metrics` (admin token).
struct CloudOperationsRoutes<C: Clock>: Sendable where C.Duration == Duration {
    let store: any CloudStore
    let authenticator: GatewayAuthenticator
    let hub: NotifyHub<C>
    let counters: CloudCounters
    let objectCounters: CloudObjectCounters
    let shelf: DictionaryShelf
    let requests: RequestCounter
    let registry: PrometheusCollectorRegistry
    /// When the cloud started, and the clock it reads: ms since 1970.
    let startedAt: Int64
    let now: @Sendable () -> Int64

    func register(on router: Router<DallyRequestContext>) {
        router.get("/healthz") { _, _ in JSONResponse.make(ByteBuffer(string: "{\"status\":\"ok\"}")) }
        router.get("/stats") { request, _ in
            try authenticator.requireAdmin(request)
            return JSONResponse.make(try await stats())
        }
        router.get("/metrics") { request, _ in
            try authenticator.requireAdmin(request)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
        }
    }

    /// `{"uptime_seconds", "tables": {name: {version, live, tombstones}}, "batches": {…},
    /// "dictionaries": {…}, "objects": {…}, "notify": {waiting, limit}, "store": {bytes,
    /// stored_answers}, "requests": [...]}`.
    func stats() async throws -> JSONWriter {
        let statistics = try await store.statistics()
        let chunkTotals = try await store.chunks.totals()
        let counts = counters.snapshot
        let objects = objectCounters.snapshot
        var writer = JSONWriter(capacity: 1024)
        writer.raw("{\"uptime_seconds\":")
        writer.int((now() - startedAt) / 1000)
        writer.raw(",\"tables\":{")
        for (i, name) in statistics.tables.keys.sorted().enumerated() {
            guard let table = statistics.tables[name] else { continue }
            if i > 0 { writer.raw(",") }
            writer.key(name)
            writer.raw("{\"version\":")
            writer.int(table.version)
            writer.raw(",\"live\":")
            writer.int(table.live)
            writer.raw(",\"tombstones\":")
            writer.int(table.tombstones)
            writer.raw("}")
        }
        writer.raw("},\"batches\":{\"received\":")
        writer.int(counts.batches)
        writer.raw(",\"replayed\":")
        writer.int(counts.replayed)
        writer.raw(",\"rows_accepted\":")
        writer.int(counts.rowsAccepted)
        writer.raw(",\"conflicts\":")
        writer.int(counts.conflicts)
        writer.raw(",\"rows_rejected\":")
        writer.int(counts.rejected)
        writer.raw(",\"downstream_rows\":")
        writer.int(counts.downstreamRows)
        writer.raw(",\"body_bytes\":")
        writer.int(counts.bodyBytes)
        writer.raw("},\"dictionaries\":{\"bodies_decoded\":")
        writer.int(shelf.bodiesDecoded)
        writer.raw(",\"in_memory\":")
        writer.int(Int64(shelf.inMemory))
        writer.raw("},\"objects\":{\"objects\":")
        writer.int(statistics.objects)
        writer.raw(",\"chunks\":")
        writer.int(Int64(chunkTotals.chunks))
        writer.raw(",\"chunk_bytes\":")
        writer.int(chunkTotals.bytes)
        writer.raw(",\"chunks_received\":")
        writer.int(objects.chunksReceived)
        writer.raw(",\"chunks_deduplicated\":")
        writer.int(objects.chunksDeduplicated)
        writer.raw(",\"bytes_deduplicated\":")
        writer.int(objects.bytesDeduplicated)
        writer.raw(",\"manifests_received\":")
        writer.int(objects.manifestsReceived)
        writer.raw(",\"gc_runs\":")
        writer.int(objects.gcRuns)
        writer.raw(",\"objects_collected\":")
        writer.int(objects.objectsCollected)
        writer.raw(",\"chunks_collected\":")
        writer.int(objects.chunksCollected)
        writer.raw(",\"bytes_collected\":")
        writer.int(objects.bytesCollected)
        writer.raw("},\"notify\":{\"waiting\":")
        writer.int(Int64(hub.waiting))
        writer.raw(",\"limit\":")
        writer.int(Int64(hub.limit))
        writer.raw("},\"store\":{\"bytes\":")
        writer.int(statistics.bytesOnDisk)
        writer.raw(",\"stored_answers\":")
        writer.int(statistics.storedAnswers)
        writer.raw("},\"requests\":")
        requests.write(to: &writer)
        writer.raw("}")
        return writer
    }
}
