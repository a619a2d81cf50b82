import DallyCore

/// One chunk of an object: its content hash and length.
public struct ChunkEntry: Sendable, Hashable {
    public let hash: ContentHash
    public let size: Int

    public init(hash: ContentHash, size: Int) {
        self.hash = hash
        self.size = size
    }
}

/// The list of chunks an object is made of, in order: what the gateway and the cloud keep per
/// object, and what travels between them once all of the chunks are there.
///
/// On the wire it is JSON, `{"hash": "…", "size": n, "chunks": [["<hash>", size], …]}`; in a
/// store it is ``storageBytes``, 36 bytes per chunk.
public struct ObjectManifest: Sendable, Hashable {
    /// The SHA-256 of the whole content.
    public let hash: ContentHash
    public let size: Int64
    public let chunks: [ChunkEntry]

    /// The most chunks a manifest may list: 2^20, which at the smallest chunk the chunker
    /// makes is far past any object size a configuration allows.
    public static let maxChunks = 1 << 20

    /// The most bytes one chunk may have on the wire or in a manifest.
    public static let maxChunkBytes = 16 << 20

    /// - Throws: ``DallyError`` `bad_request` when the sizes do not add up to `size`, a chunk
    ///   is empty or too large, or there are too many chunks.
    public init(hash: ContentHash, size: Int64, chunks: [ChunkEntry]) throws(DallyError) {
        guard chunks.count <= Self.maxChunks else {
            throw DallyError(.badRequest, "a manifest lists at most \(Self.maxChunks) chunks, got \(chunks.count)")
        }
        var total: Int64 = 0
        for (i, chunk) in chunks.enumerated() {
            guard chunk.size > 0, chunk.size <= Self.maxChunkBytes else {
                throw DallyError(
                    .badRequest, "chunk \(i) has \(chunk.size) bytes; chunks have 1…\(Self.maxChunkBytes) bytes",
                    field: "chunks")
            }
            total += Int64(chunk.size)
        }
        guard total == size else {
            throw DallyError(.badRequest, "the chunks add up to \(total) bytes, not the size \(size)", field: "size")
        }
        self.hash = hash
        self.size = size
        self.chunks = chunks
    }

    /// The row reference for this object.
    public var reference: ObjectReference { ObjectReference(hash: hash, size: size, chunks: chunks.count) }

    /// Each chunk's first byte's offset in the object, and the object's size at the end.
    public var offsets: [Int64] {
        var offsets = [Int64]()
        offsets.reserveCapacity(chunks.count + 1)
        var offset: Int64 = 0
        for chunk in chunks {
            offsets.append(offset)
            offset += Int64(chunk.size)
        }
        offsets.append(offset)
        return offsets
    }

    /// The chunks that hold bytes `range` (a non-empty range within the object), with the
    /// offset of the first of them: what a `Range` request reads.
    public func chunks(covering range: ClosedRange<Int64>) -> (first: Int, offset: Int64, chunks: ArraySlice<ChunkEntry>) {
        let offsets = self.offsets
        // The last chunk starting at or before range.lowerBound.
        var low = 0
        var high = chunks.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if offsets[mid] <= range.lowerBound { low = mid } else { high = mid - 1 }
        }
        var last = low
        while last + 1 < chunks.count, offsets[last + 1] <= range.upperBound { last += 1 }
        return (low, offsets[low], chunks[low...last])
    }

    // MARK: Wire

    public var json: JSONValue {
        .object([
            JSONMember("hash", .string(hash.hex)),
            JSONMember("size", .int(size)),
            JSONMember("chunks", .array(chunks.map { .array([.string($0.hash.hex), .int(Int64($0.size))]) })),
        ])
    }

    /// Reads a manifest received from a gateway or the cloud.
    ///
    /// - Throws: ``DallyError`` `bad_request` naming what is wrong.
    public init(json: JSONValue) throws(DallyError) {
        guard case .string(let hex)? = json["hash"], let hash = ContentHash(hex: hex) else {
            throw DallyError(.badRequest, "a manifest needs \"hash\": 64 hex digits", field: "hash")
        }
        guard case .int(let size)? = json["size"], size >= 0 else {
            throw DallyError(.badRequest, "a manifest needs \"size\": an integer ≥ 0", field: "size")
        }
        guard case .array(let list)? = json["chunks"] else {
            throw DallyError(.badRequest, "a manifest needs \"chunks\": [[hash, size], …]", field: "chunks")
        }
        guard list.count <= Self.maxChunks else {
            throw DallyError(.badRequest, "a manifest lists at most \(Self.maxChunks) chunks", field: "chunks")
        }
        var chunks: [ChunkEntry] = []
        chunks.reserveCapacity(list.count)
        for (i, element) in list.enumerated() {
            guard case .array(let pair) = element, pair.count == 2, case .string(let chunkHex) = pair[0],
                let chunkHash = ContentHash(hex: chunkHex), case .int(let chunkSize) = pair[1],
                chunkSize > 0, chunkSize <= Self.maxChunkBytes
            else {
                throw DallyError(.badRequest, "chunks[\(i)] must be [\"<64 hex digits>\", size 1…\(Self.maxChunkBytes)]", field: "chunks")
            }
            chunks.append(ChunkEntry(hash: chunkHash, size: Int(chunkSize)))
        }
        try self.init(hash: hash, size: size, chunks: chunks)
    }

    // MARK: Storage

    /// The chunk list packed for a store: per chunk, 32 hash bytes and the size as 4 bytes,
    /// big-endian.
    public var storageBytes: [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(chunks.count * 36)
        for chunk in chunks {
            out.append(contentsOf: chunk.hash.bytes)
            let size = UInt32(chunk.size)
            out.append(contentsOf: [UInt8(size >> 24), UInt8(size >> 16 & 0xff), UInt8(size >> 8 & 0xff), UInt8(size & 0xff)])
        }
        return out
    }

    /// Unpacks ``storageBytes``; nil when they are not a chunk list of `size` bytes.
    public init?(hash: ContentHash, size: Int64, storage: some Collection<UInt8>) {
        let bytes = Array(storage)
        guard bytes.count % 36 == 0 else { return nil }
        var chunks: [ChunkEntry] = []
        chunks.reserveCapacity(bytes.count / 36)
        var i = 0
        while i < bytes.count {
            guard let chunkHash = ContentHash(digest: bytes[i..<i + 32]) else { return nil }
            let chunkSize = Int(bytes[i + 32]) << 24 | Int(bytes[i + 33]) << 16 | Int(bytes[i + 34]) << 8 | Int(bytes[i + 35])
            chunks.append(ChunkEntry(hash: chunkHash, size: chunkSize))
            i += 36
        }
        guard let manifest = try? ObjectManifest(hash: hash, size: size, chunks: chunks) else { return nil }
        self = manifest
    }
}
