import DallyObjects

/// How far one object's upload got: its distinct chunks in manifest order, and the length of
/// the prefix of them known to be in the cloud (`chunks_done` in the store).
///
/// Pure bookkeeping, so that the rules are tested without a cloud: the ``ObjectUploader``
/// asks, sends and persists; this says what to ask about and how far the walk reached.
///
/// ```swift
/// var walk = ChunkWalk(manifest: manifest, chunksDone: 0)
/// let missing = walk.inOrder(try await askCloud(walk.asking(round: 0)))
/// walk.confirm(missing: missing)          // what precedes the first missing chunk is there
/// for index in missing.indices { send(missing[index]); walk.sent(index, of: missing) }
/// ```
struct ChunkWalk: Sendable {
    /// Distinct chunks, first occurrence first.
    let unique: [ContentHash]
    private let sizes: [ContentHash: Int]
    private let position: [ContentHash: Int]
    /// Chunks `unique[..<done]` are known to be in the cloud.
    private(set) var done: Int

    init(manifest: ObjectManifest, chunksDone: Int) {
        var sizes: [ContentHash: Int] = [:]
        var unique: [ContentHash] = []
        for chunk in manifest.chunks where sizes.updateValue(chunk.size, forKey: chunk.hash) == nil {
            unique.append(chunk.hash)
        }
        self.unique = unique
        self.sizes = sizes
        position = Dictionary(unique.enumerated().map { ($1, $0) }) { first, _ in first }
        done = min(max(chunksDone, 0), unique.count)
    }

    /// The chunks to ask the cloud about: the first round asks only past the known prefix (a
    /// resumed walk near its end asks about a few hashes); a second round, after the cloud
    /// lost a chunk it had, starts over and asks about all.
    mutating func asking(round: Int) -> [ContentHash] {
        guard round == 0 else {
            done = 0
            return unique
        }
        return Array(unique[done...])
    }

    /// `hashes` in manifest order.
    func inOrder(_ hashes: [ContentHash]) -> [ContentHash] {
        hashes.sorted { (position[$0] ?? .max) < (position[$1] ?? .max) }
    }

    /// The bytes of `hashes`.
    func bytes(of hashes: some Sequence<ContentHash>) -> Int64 {
        hashes.reduce(0) { $0 + Int64(sizes[$1] ?? 0) }
    }

    /// The bytes of the prefix known to be there.
    var bytesDone: Int64 { bytes(of: unique[..<done]) }

    /// After an ask: everything before the first missing chunk is there. Whether the known
    /// prefix grew (or, in a later round, must be written anew), so that it is persisted.
    mutating func confirm(missing: [ContentHash], round: Int) -> Bool {
        let confirmed = missing.first.flatMap { position[$0] } ?? unique.count
        guard confirmed > done || round > 0 else { return false }
        done = confirmed
        return true
    }

    /// After `missing[index]` was sent: everything up to the next missing chunk is there.
    mutating func sent(_ index: Int, of missing: [ContentHash]) {
        done = index + 1 < missing.count ? (position[missing[index + 1]] ?? done) : unique.count
    }
}
