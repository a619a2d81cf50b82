import DallyObjects

/// One GC pass over a replica's objects and chunks.
///
/// First the objects no row references and no queue holds, once older than the grace, are
/// deleted; then the chunks no remaining manifest lists, once stored before the grace (and
/// before every receive still under way began, see ``ObjectIntakes``). An object a client
/// uploaded and has not named in a row yet is young, and so are the chunks of an upload in
/// progress.
public struct ObjectCollector: Sendable {
    /// What a pass removed.
    public struct Report: Sendable, Equatable {
        public var objects: Int = 0
        public var chunks: Int = 0
        public var chunkBytes: Int64 = 0

        public init(objects: Int = 0, chunks: Int = 0, chunkBytes: Int64 = 0) {
            self.objects = objects
            self.chunks = chunks
            self.chunkBytes = chunkBytes
        }
    }

    public let store: ReplicaStore
    public let chunks: any ChunkStore
    public let intakes: ObjectIntakes
    /// `objects.gc_grace` in milliseconds.
    public let graceMs: Int64

    public init(store: ReplicaStore, chunks: any ChunkStore, intakes: ObjectIntakes, grace: Duration) {
        self.store = store
        self.chunks = chunks
        self.intakes = intakes
        let (seconds, attoseconds) = grace.components
        graceMs = seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    /// Runs one pass as of `now` (ms since 1970).
    public func pass(now: Int64) async throws -> Report {
        let cutoff = now - graceMs
        // Taken before the manifests are read: a receive under way now is kept by its start
        // time, and one that has finished has recorded its manifest, which the read lists.
        let chunkCutoff = min(cutoff, intakes.oldestStart ?? cutoff)
        let collection = try await store.collectObjects(createdBefore: cutoff)
        let swept = try await chunks.sweep(storedBefore: chunkCutoff, keeping: collection.listedChunks)
        return Report(objects: collection.collected, chunks: swept.chunks, chunkBytes: swept.bytes)
    }
}
