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

    init(hash: ContentHash, bytes: [UInt8]) {
        self.hash = hash
        rawBytes = bytes.count
        (body, compressed) = ChunkCompression.payload(for: bytes)
    }

    /// Sends the body from `offset` (where the cloud's partial copy ends) to its end; `queued`
    /// is called as each frame takes its place in the queue for a connection.
    func send(
        from offset: Int, over client: CloudClient, queued: (@Sendable () -> Void)? = nil
    ) async throws(CloudError) -> CloudClient.Traffic {
        var traffic = CloudClient.Traffic(sentRaw: rawBytes)
        let (_, sent) = try await client.sendFrames(length: body.count, from: offset, name: "chunk \(hash)") {
            (start, size) async throws(CloudError) in
            try await client.put(
                frame: body[start..<(start + size)], of: hash, at: start, length: body.count, compressed: compressed,
                queued: queued)
        }
        traffic.add(sent)
        return traffic
    }
}
