/// What the ``ObjectUploader`` did since start (see ``ObjectTransferCounters`` for each
/// count's meaning), and the bytes its requests moved.
struct ObjectUploadCounters: Sendable {
    var uploaded: Int64 = 0
    var chunksSent: Int64 = 0
    var chunkBytesSent: Int64 = 0
    var chunkBytesOnWire: Int64 = 0
    var chunksAsked: Int64 = 0
    var chunksSkipped: Int64 = 0
    var bytesSkipped: Int64 = 0
    var resumedTransfers: Int64 = 0
    var bytesNotResent: Int64 = 0
    var withdrawn: Int64 = 0
    var walksPaused: Int64 = 0
    var asksAhead: Int64 = 0
    var chunksAhead: Int64 = 0
    var chunksAheadCut: Int64 = 0
    var manifestsEarly: Int64 = 0
    var manifestsResent: Int64 = 0
    var manifestsAhead: Int64 = 0
    var traffic = CloudClient.Traffic()
}
