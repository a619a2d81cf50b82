/// Objects uploaded on their own (`POST /v1/objects`), for row writes to name afterwards.
extension DallyClient {
    /// Uploads the file at `path` as an object no row names yet, and answers its reference.
    /// A row write then names it (`["image": ObjectInfo.named(info.hash)]`) and commits with
    /// its bytes in place: how a row with several objects, or many rows, appear at once. An
    /// object no row names is deleted after the gateway's `objects.gc_grace` (default 1 h).
    ///
    /// For example:
    /// ```swift
    /// let front = try await client.storeObject(file: "front.jpg")
    /// let back = try await client.storeObject(file: "back.jpg")
    /// try await cards.put(id: "c1", ["front": ObjectInfo.named(front.hash), "back": ObjectInfo.named(back.hash)])
    /// ```
    public func storeObject(file path: String, progress: ProgressHandler? = nil) async throws -> ObjectInfo {
        let (size, hash) = try FileBytes.measure(path: path)
        let stream = try FileBytes.stream(path: path, progress: progress, total: size)
        return try await storeObject(from: stream, length: size, sha256: hash)
    }

    /// Uploads the bytes of `pieces` as an object no row names yet (see ``storeObject(file:progress:)``).
    ///
    /// For example: `let info = try await client.storeObject(from: ByteStream(bytes: pdf))`.
    public func storeObject<Pieces: AsyncSequence & Sendable>(
        from pieces: Pieces, length: Int64? = nil, sha256: String? = nil, progress: ProgressHandler? = nil
    ) async throws -> ObjectInfo where Pieces.Element == [UInt8] {
        let hasher = HashingStream(ByteStream(pieces), total: length, progress: progress)
        var headers = [(name: "Content-Type", value: "application/octet-stream")]
        if let sha256 { headers.append((name: "Dally-Object-Sha256", value: sha256)) }
        let response = try await send(
            "POST", Endpoint("v1", "objects"), headers: headers, body: .stream(hasher.stream, length: length),
            timeout: transferTimeout)
        let bytes = try await response.body.collect(upTo: DallyClient.maximumDocumentBytes)
        let info = try JSONCoding.decode(ObjectInfo.self, from: bytes, what: "object upload")
        if let sent = hasher.finalHash(), sent != info.hash {
            throw DallyClientError.hashMismatch(expected: sent, received: info.hash)
        }
        return info
    }
}
