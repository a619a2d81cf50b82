import DallyObjects

/// One chunk's upload as frames sized to the measured link, starting at the byte the cloud
/// already holds (PROTOCOL.md §13, resumable chunks).
///
/// The body is the chunk as it goes on the wire (zstd when that pays, ``ChunkCompression``),
/// the same bytes at every attempt, so that an offset into it means the same thing after a
/// cut. On a fast link a frame is the whole chunk: one request, as before. On a slow one each
/// frame takes about `target_request_time`, and a frame cut mid-way loses nothing the cloud
/// received.
struct ChunkUpload: Sendable {
    let hash: ContentHash
    let rawBytes: Int
    let body: [UInt8]
    let compressed: Bool

    /// The most frames that may fail to move the cloud's offset forward before giving up.
    static let maxStalledFrames = 3

    init(hash: ContentHash, bytes: [UInt8]) {
        self.hash = hash
        rawBytes = bytes.count
        (body, compressed) = ChunkCompression.payload(for: bytes)
    }

    /// Sends the body from `offset` (where the cloud's partial copy ends) to its end.
    func send(from offset: Int, over client: CloudClient) async throws(CloudError) -> CloudClient.Traffic {
        var traffic = CloudClient.Traffic(sentRaw: rawBytes)
        var at = min(max(offset, 0), body.count - 1)
        var stalled = 0
        while true {
            let frame = client.watch.model.frameBytes(
                whole: body.count - at, target: client.watch.timings.targetRequestTime)
            let (next, exchanged) = try await client.put(
                frame: body[at..<(at + frame)], of: hash, at: at, length: body.count, compressed: compressed)
            traffic.sentCompressed += exchanged.sentCompressed
            traffic.received += exchanged.received
            guard let next else { return traffic }
            if next <= at {
                // The cloud lost or replaced its partial copy (another gateway's upload of the
                // same chunk, memory pressure): go on from where it says.
                stalled += 1
                guard stalled < Self.maxStalledFrames else {
                    throw .badAnswer("the cloud keeps refusing chunk \(hash)'s frames (at byte \(next))")
                }
            }
            at = min(next, body.count - 1)
        }
    }
}
