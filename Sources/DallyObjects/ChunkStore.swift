/// Where chunk bytes live, keyed by their content hash: the gateway's and the cloud's store
/// share this interface (an SQLite file beside the database by default).
///
/// Chunks are immutable and content-addressed: storing one that exists changes nothing, so
/// writes need no coordination with readers, and an upload that stopped half-way leaves only
/// chunks no manifest names, which ``sweep(storedBefore:keeping:)`` removes after a grace period.
/// Callers check a chunk's hash before they store it.
public protocol ChunkStore: Sendable {
    /// Stores `bytes` under `hash` unless a chunk with that hash is there; true when stored now.
    /// Durable when it returns.
    func put(_ hash: ContentHash, bytes: [UInt8], now: Int64) async throws -> Bool

    /// Which of `hashes` are stored.
    func present(_ hashes: [ContentHash]) async throws -> Set<ContentHash>

    /// A chunk's bytes, or nil when it is not stored.
    func get(_ hash: ContentHash) async throws -> [UInt8]?

    /// Deletes the chunks stored before `storedBefore` (ms since 1970) that `keeping` does not
    /// contain; returns how many chunks and bytes went.
    func sweep(storedBefore: Int64, keeping: Set<ContentHash>) async throws -> (chunks: Int, bytes: Int64)

    /// How many chunks and bytes are stored.
    func totals() async throws -> (chunks: Int, bytes: Int64)
}
