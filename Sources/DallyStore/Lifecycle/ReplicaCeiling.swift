import DallyCore

/// Refuses local writes while the replica's files (`replica.sqlite` and its WAL, what `/stats`
/// reports as `store_bytes`) take `[store] max_bytes` or more, so that a box whose cloud is
/// away for weeks stops taking new rows with a clear `507 insufficient_storage` instead of
/// filling its disk.
///
/// Only local writes are held to it. Sync goes on past it: applying the cloud's answers empties
/// the outbox, and compaction and retention (``TableLifecycle``) free pages, which incremental
/// vacuum returns to the filesystem; pulled pages still land, since what the cloud sends is
/// bounded by scopes and retention, not by refusing it. The size is read from the filesystem
/// at most every `interval`, so a write costs a clock read.
///
/// ```swift
/// let ceiling = ReplicaCeiling(path: "/var/lib/dally/replica.sqlite", maxBytes: 8 << 30)
/// try ceiling.check()   // throws insufficient_storage at 8 GiB or more
/// ```
public final class ReplicaCeiling: Sendable {
    let maxBytes: Int64
    private let size: ThrottledReading<Int64>

    public init(path: String, maxBytes: Int64, interval: Duration = .seconds(1)) {
        self.maxBytes = maxBytes
        self.size = ThrottledReading(interval: interval) { DatabaseFiles.bytes(of: path) }
    }

    public func check() throws(DallyError) {
        guard maxBytes > 0 else { return }
        let bytes = size.value
        guard bytes >= maxBytes else { return }
        throw DallyError(
            .insufficientStorage,
            "the replica takes \(ByteCount.words(Int(bytes))), at or over store.max_bytes "
                + "(\(ByteCount.words(Int(maxBytes)))): the write was not saved (reads and sync go on). Let the outbox "
                + "drain to the cloud, shorten retain or tombstone_ttl, or raise store.max_bytes, then write again")
    }
}
