import DallyCore
import DallySync
import Logging

/// Deletes what no row needs any more, every `objects.gc_interval`: objects no row of any
/// table references, then chunks no remaining object lists, each only once it is older than
/// `objects.gc_grace`.
///
/// The grace period is what makes uploads safe to collect around: chunks arrive before their
/// manifest, and a manifest may arrive before the row that names it (a row of a table without
/// `atomic_sync` may also come first). Both are young while that upload is under way. An
/// object collected after all is uploaded again: a gateway that is told `unknown_object` asks
/// which chunks are missing and sends them.
public struct CloudObjectCollector: Sendable {
    let store: any CloudStore
    let grace: Duration
    let interval: Duration
    let counters: CloudObjectCounters
    let now: @Sendable () -> Int64
    let logger: Logger

    /// One collection as of `now` (ms since 1970): what the loop runs, callable directly so
    /// that a test decides the time.
    @discardableResult
    public func collect(now: Int64) async throws -> ObjectCollection {
        let collection = try await store.collectObjects(before: now - grace.milliseconds)
        counters.collected(collection)
        return collection
    }

    /// One collection now, logged when it deleted anything: the pass the cloud's
    /// ``RecurringPass`` runs every `objects.gc_interval`, the first one interval after start
    /// (a cloud that restarts often has no reason to collect sooner, and a fresh one has
    /// nothing to collect).
    func collectNow() async throws {
        let collection = try await collect(now: now())
        guard collection.objects > 0 || collection.chunks > 0 else { return }
        logger.info(
            "collected unreferenced objects",
            metadata: [
                "objects": "\(collection.objects)", "chunks": "\(collection.chunks)", "bytes": "\(collection.chunkBytes)",
            ])
    }
}
