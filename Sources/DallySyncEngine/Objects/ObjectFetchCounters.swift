/// What the ``ObjectFetcher`` did since start (see ``ObjectTransferCounters`` for each count's
/// meaning), and the bytes its requests moved.
struct ObjectFetchCounters: Sendable {
    var fetched: Int64 = 0
    var chunksFetched: Int64 = 0
    var bytesFetched: Int64 = 0
    var bytesNotRefetched: Int64 = 0
    var onDemandFetches: Int64 = 0
    var fetchFailures: Int64 = 0
    var traffic = CloudClient.Traffic()
}
