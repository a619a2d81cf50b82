import DallyObjects
import Foundation

/// Objects in a row's `OBJECT` column: uploads from a file or a stream, downloads to a file
/// (resumable) or as a stream, every download checked against its SHA-256.
extension Table {
    /// Uploads the file at `path` as row `id`'s object in `column`, streamed a piece at a time.
    /// The file is read twice: once for its SHA-256, which the gateway checks the bytes
    /// against (`hash_mismatch`, nothing recorded), and once to send it.
    ///
    /// - Returns: the row, created with its other columns null if it did not exist.
    ///
    /// For example:
    /// ```swift
    /// let row = try await photos.uploadObject(id: "p1", column: "image", file: "cat.jpg") { p in
    ///     print("\(Int((p.fraction ?? 0) * 100))%")
    /// }
    /// ```
    @discardableResult
    public func uploadObject(
        id: String, column: String, file path: String, expectedSeq: Int64? = nil, progress: ProgressHandler? = nil
    ) async throws -> Row<Values> {
        let (size, hash) = try FileBytes.measure(path: path)
        let stream = try FileBytes.stream(path: path, progress: progress, total: size)
        return try await uploadObject(id: id, column: column, from: stream, length: size, sha256: hash, expectedSeq: expectedSeq)
    }

    /// Uploads the bytes of `pieces` as row `id`'s object in `column`, as they come.
    ///
    /// - Parameters:
    ///   - length: the total, when known (sent as `Content-Length`; the gateway refuses an
    ///     object over its limit at once).
    ///   - sha256: the hash the bytes must have, when known; the gateway checks it. Either way,
    ///     the library hashes what it sends and checks the gateway's answer against it.
    ///
    /// For example:
    /// ```swift
    /// let (pieces, input) = AsyncStream<[UInt8]>.makeStream()
    /// Task { for frame in camera.frames { input.yield(frame) }; input.finish() }
    /// try await videos.uploadObject(id: "v1", column: "clip", from: pieces)
    /// ```
    @discardableResult
    public func uploadObject<Pieces: AsyncSequence & Sendable>(
        id: String, column: String, from pieces: Pieces, length: Int64? = nil, sha256: String? = nil,
        expectedSeq: Int64? = nil, progress: ProgressHandler? = nil
    ) async throws -> Row<Values> where Pieces.Element == [UInt8] {
        var query: [(String, String)] = []
        if let expectedSeq { query.append(("expected_seq", String(expectedSeq))) }
        let endpoint = Endpoint(segments: ["v1", "tables", name, "rows", id, "objects", column], query: query)
        let hasher = HashingStream(ByteStream(pieces), total: length, progress: progress)
        var headers = [(name: "Content-Type", value: "application/octet-stream")]
        if let sha256 { headers.append((name: "Dally-Object-Sha256", value: sha256)) }
        let response = try await client.send(
            "PUT", endpoint, headers: headers, body: .stream(hasher.stream, length: length), timeout: client.transferTimeout)
        let bytes = try await response.body.collect(upTo: DallyClient.maximumDocumentBytes)
        let row = try JSONCoding.decode(Row<JSONValue>.self, from: bytes, what: "object upload")
        let sent = hasher.finalHash()
        if case .string(let stored)? = row.values?[column]?["hash"], let sent, stored != sent {
            throw DallyClientError.hashMismatch(expected: sent, received: stored)
        }
        return try JSONCoding.decode(Row<Values>.self, from: bytes, what: "object upload")
    }

    /// Downloads row `id`'s object in `column` to `path`, checking its SHA-256, and answers
    /// what it was.
    ///
    /// The bytes go first to `path + ".part"` (and the object's hash to `path + ".part-sha256"`);
    /// when a download is cut, calling this again asks only for the bytes missing (`Range`,
    /// with `If-Range` so that an object changed since starts over). Once whole and checked,
    /// the file is moved to `path`.
    ///
    /// For example:
    /// ```swift
    /// let info = try await photos.downloadObject(id: "p1", column: "image", to: "/tmp/p1.jpg")
    /// ```
    @discardableResult
    public func downloadObject(
        id: String, column: String, to path: String, progress: ProgressHandler? = nil
    ) async throws -> ObjectInfo {
        let partial = PartialDownload(path: path)
        var headers: [(name: String, value: String)] = []
        let earlier = partial.resumable()
        if let earlier {
            headers = [(name: "Range", value: "bytes=\(earlier.size)-"), (name: "If-Range", value: "\"\(earlier.hash)\"")]
        }
        let response: TransportResponse
        do {
            response = try await client.send("GET", objectEndpoint(id, column), headers: headers, timeout: client.transferTimeout)
        } catch let error as DallyClientError where error.code == .rangeNotSatisfiable {
            // The part holds the whole object already (cut between the last byte and the move).
            partial.discard()
            return try await downloadObject(id: id, column: column, to: path, progress: progress)
        }
        guard let hash = Self.etag(response) else {
            throw DallyClientError.invalidAnswer("object download without an ETag")
        }
        let resuming = response.status == 206 && earlier != nil
        let start = resuming ? (earlier?.size ?? 0) : 0
        let total = Self.totalSize(response, start: start)
        // A resumed download's hash starts from the bytes kept, read back from the part.
        let (writer, kept) = try partial.open(hash: hash, appending: resuming)
        var digest = kept
        var completed = start
        for try await piece in response.body {
            try writer.write(piece)
            digest.update(piece)
            completed += Int64(piece.count)
            progress?(TransferProgress(completed: completed, total: total))
        }
        try writer.close()
        let received = digest.finalize().hex
        guard received == hash else {
            partial.discard()
            throw DallyClientError.hashMismatch(expected: hash, received: received)
        }
        try partial.finish()
        return ObjectInfo(hash: hash, size: completed, chunks: 0)
    }

    /// Row `id`'s object in `column` as a stream of pieces, with what the gateway says it is
    /// (hash and size). The stream checks the bytes against the hash as they pass and throws
    /// ``DallyClientError/hashMismatch(expected:received:)`` at its end if they differ.
    /// `range` asks for some bytes only (`first...last`, as offsets; then nothing is checked).
    ///
    /// For example:
    /// ```swift
    /// let (info, bytes) = try await photos.objectStream(id: "p1", column: "image")
    /// for try await piece in bytes { try out.write(contentsOf: piece) }
    /// ```
    public func objectStream(
        id: String, column: String, range: ClosedRange<Int64>? = nil, progress: ProgressHandler? = nil
    ) async throws -> (ObjectInfo, ByteStream) {
        let headers = range.map { [(name: "Range", value: "bytes=\($0.lowerBound)-\($0.upperBound)")] } ?? []
        let response = try await client.send("GET", objectEndpoint(id, column), headers: headers, timeout: client.transferTimeout)
        guard let hash = Self.etag(response) else {
            throw DallyClientError.invalidAnswer("object download without an ETag")
        }
        let total = Self.totalSize(response, start: 0)
        let info = ObjectInfo(hash: hash, size: total ?? 0, chunks: 0)
        if response.status == 206 {
            return (info, HashingStream(response.body, total: total, progress: progress).stream)
        }
        return (info, HashingStream(response.body, total: total, progress: progress, expected: hash).stream)
    }

    func objectEndpoint(_ id: String, _ column: String) -> Endpoint {
        Endpoint("v1", "tables", name, "rows", id, "objects", column)
    }

    static func etag(_ response: TransportResponse) -> String? {
        guard let tag = response.header("ETag") else { return nil }
        return tag.trimmingCharacters(in: CharacterSet(charactersIn: "\"W/"))
    }

    /// The object's whole size: after the `/` of `Content-Range`, else `Content-Length`.
    static func totalSize(_ response: TransportResponse, start: Int64) -> Int64? {
        if let range = response.header("Content-Range"), let slash = range.lastIndex(of: "/") {
            return Int64(range[range.index(after: slash)...])
        }
        return response.header("Content-Length").flatMap { Int64($0) }.map { $0 + start }
    }
}
