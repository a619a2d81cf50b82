import DallyConfig
import DallyCore
import DallyObjects
import DallyStore
import Foundation

/// The gateway's object parts besides the replica, in one place for the routes, the GC loop,
/// `/stats` and the sync side: the chunk store, the receives under way, the counters, and
/// the settings and chunking they run with.
public struct GatewayObjects: Sendable {
    /// `chunks.sqlite` in the data directory, opened after (and locked by) the replica.
    public let chunkStore: SQLiteChunkStore
    /// Receives under way; whatever stores chunks before recording a manifest (a fetch from
    /// the cloud too) runs inside ``ObjectIntakes/receiving(startedAt:_:)``.
    public let intakes: ObjectIntakes
    public let counters: ObjectCounters
    public let settings: ObjectSettings
    /// How received objects are cut into chunks.
    public let chunking: ChunkingParameters
    let collector: ObjectCollector

    init(store: ReplicaStore, settings: ObjectSettings, chunking: ChunkingParameters, synchronousFull: Bool) throws {
        chunkStore = try SQLiteChunkStore.open(directory: store.directory, synchronousFull: synchronousFull)
        intakes = ObjectIntakes()
        counters = ObjectCounters()
        self.settings = settings
        self.chunking = chunking
        collector = ObjectCollector(store: store, chunks: chunkStore, intakes: intakes, grace: settings.gcGrace)
    }

    /// Runs one GC pass as of `now` (ms since 1970) and counts what it deleted.
    @discardableResult
    public func collect(now: Int64) async throws -> ObjectCollector.Report {
        let report = try await collector.pass(now: now)
        counters.recordCollection(report)
        return report
    }
}
