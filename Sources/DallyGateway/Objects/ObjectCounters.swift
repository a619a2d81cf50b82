import DallyCore
import DallyStore
import Synchronization

/// What the gateway has done with objects since it started, for `/stats` and `/metrics`.
///
/// One lock, plain integers: bumped once per upload or GC pass, never per byte. The sync side
/// adds its own counters here (a field in ``Snapshot``, a line in ``Snapshot/fields``), so
/// that all object numbers are reported in one block.
public final class ObjectCounters: Sendable {
    public struct Snapshot: Sendable, Equatable {
        /// Objects received from clients and recorded.
        public var uploadsReceived: Int64 = 0
        /// Chunks of received objects that the chunk store held already.
        public var chunksDeduplicated: Int64 = 0
        /// Their bytes: what deduplication saved storing.
        public var bytesSavedByDedup: Int64 = 0
        /// Objects and chunks GC deleted.
        public var gcObjectsCollected: Int64 = 0
        public var gcChunksCollected: Int64 = 0

        public init() {}

        /// Every counter by its name in `/stats` (and, prefixed `dally_objects_`, in `/metrics`).
        public var fields: [(name: String, value: Int64)] {
            [
                ("uploads_received", uploadsReceived), ("chunks_deduplicated", chunksDeduplicated),
                ("bytes_saved_by_dedup", bytesSavedByDedup), ("gc_objects_collected", gcObjectsCollected),
                ("gc_chunks_collected", gcChunksCollected),
            ]
        }
    }

    private let state = Mutex(Snapshot())

    public init() {}

    public var snapshot: Snapshot { state.withLock { $0 } }

    /// Counts an upload recorded, with the chunks of it that were stored already.
    public func recordUpload(deduplicatedChunks: Int, deduplicatedBytes: Int64) {
        state.withLock {
            $0.uploadsReceived += 1
            $0.chunksDeduplicated += Int64(deduplicatedChunks)
            $0.bytesSavedByDedup += deduplicatedBytes
        }
    }

    /// Counts what a GC pass deleted.
    public func recordCollection(_ report: ObjectCollector.Report) {
        state.withLock {
            $0.gcObjectsCollected += Int64(report.objects)
            $0.gcChunksCollected += Int64(report.chunks)
        }
    }
}
