/// What the sync engine moved of objects since start: the uploader's counters and the
/// fetcher's, side by side.
public struct ObjectTransferCounters: Sendable, Equatable {
    /// Objects the cloud acknowledged whole.
    public var uploaded: Int64 = 0
    /// Chunks sent, their bytes, and those bytes as they went on the wire (compressed or not).
    public var chunksSent: Int64 = 0
    public var chunkBytesSent: Int64 = 0
    public var chunkBytesOnWire: Int64 = 0
    /// Chunk hashes named in missing-chunks asks (a resumed walk asks only about the chunks
    /// not known to be there).
    public var chunksAsked: Int64 = 0
    /// Chunks the cloud already had when asked, and their bytes: what chunk reuse saved.
    public var chunksSkipped: Int64 = 0
    public var bytesSkipped: Int64 = 0
    /// Uploads that went on from where an earlier, interrupted walk stopped (a drop, a
    /// restart, a switch of uplink), and the chunk bytes they did not send again.
    public var resumedTransfers: Int64 = 0
    public var bytesNotResent: Int64 = 0
    /// Uploads dropped before or during their walk because no row wanted the object any more
    /// and no row naming it had left (a photo retaken before Wi-Fi came).
    public var withdrawn: Int64 = 0
    /// Object walks paused between chunks for rows due on another uplink (each resumes later).
    public var walksPaused: Int64 = 0
    /// Walks that took the ask made beside their wake's rows (``EarlyAsk``) instead of asking.
    public var asksAhead: Int64 = 0
    /// First chunks sent beside such an ask on a long link (before its answer), and those of
    /// them cut when the answer said the cloud had the chunk already.
    public var chunksAhead: Int64 = 0
    public var chunksAheadCut: Int64 = 0
    /// Manifests sent while the object's last chunks were still on the wire (on a long link),
    /// and those the cloud answered before the chunks were in, sent again after them.
    public var manifestsEarly: Int64 = 0
    public var manifestsResent: Int64 = 0
    /// Of the manifests sent early, those sent beside the ask, with an object of one chunk.
    public var manifestsAhead: Int64 = 0
    /// Objects fetched from the cloud (by download policy, on demand, or with an atomic row),
    /// and the chunks and bytes that took.
    public var fetched: Int64 = 0
    public var chunksFetched: Int64 = 0
    public var bytesFetched: Int64 = 0
    /// Bytes of cut chunk downloads that were kept and not fetched again (the rest came by
    /// `Range`).
    public var bytesNotRefetched: Int64 = 0
    public var onDemandFetches: Int64 = 0
    public var fetchFailures: Int64 = 0

    public init() {}

    init(uploads: ObjectUploadCounters, fetches: ObjectFetchCounters) {
        uploaded = uploads.uploaded
        chunksSent = uploads.chunksSent
        chunkBytesSent = uploads.chunkBytesSent
        chunkBytesOnWire = uploads.chunkBytesOnWire
        chunksAsked = uploads.chunksAsked
        chunksSkipped = uploads.chunksSkipped
        bytesSkipped = uploads.bytesSkipped
        resumedTransfers = uploads.resumedTransfers
        bytesNotResent = uploads.bytesNotResent
        withdrawn = uploads.withdrawn
        walksPaused = uploads.walksPaused
        asksAhead = uploads.asksAhead
        chunksAhead = uploads.chunksAhead
        chunksAheadCut = uploads.chunksAheadCut
        manifestsEarly = uploads.manifestsEarly
        manifestsResent = uploads.manifestsResent
        manifestsAhead = uploads.manifestsAhead
        fetched = fetches.fetched
        chunksFetched = fetches.chunksFetched
        bytesFetched = fetches.bytesFetched
        bytesNotRefetched = fetches.bytesNotRefetched
        onDemandFetches = fetches.onDemandFetches
        fetchFailures = fetches.fetchFailures
    }

    public var counters: [(String, Int64)] {
        [
            ("objects_uploaded", uploaded), ("object_chunks_asked", chunksAsked), ("object_chunks_sent", chunksSent),
            ("object_chunk_bytes_sent", chunkBytesSent), ("object_chunk_bytes_on_wire", chunkBytesOnWire),
            ("object_chunks_skipped", chunksSkipped), ("object_bytes_skipped", bytesSkipped),
            ("object_resumed_transfers", resumedTransfers), ("object_bytes_not_resent", bytesNotResent),
            ("object_uploads_withdrawn", withdrawn), ("object_walks_paused", walksPaused),
            ("object_asks_ahead", asksAhead), ("object_chunks_ahead", chunksAhead),
            ("object_chunks_ahead_cut", chunksAheadCut), ("object_manifests_early", manifestsEarly), ("object_manifests_resent", manifestsResent),
            ("object_manifests_ahead", manifestsAhead),
            ("objects_fetched", fetched), ("object_chunks_fetched", chunksFetched),
            ("object_bytes_fetched", bytesFetched), ("object_bytes_not_refetched", bytesNotRefetched),
            ("object_on_demand_fetches", onDemandFetches),
            ("object_fetch_failures", fetchFailures),
        ]
    }
}
