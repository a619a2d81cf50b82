import DallyObjects

/// The beginnings of bodies whose upload was cut or is sent in frames — chunks (PROTOCOL.md
/// §13.2.1) and batches (§6.1) — kept in memory so that the gateway resumes at the byte where
/// it stopped instead of sending the body again.
///
/// Each partial is keyed by a hash: a chunk's by its content's, a batch body's by the hash of
/// the body as sent. It holds the body as sent (compressed or not, as its
/// `Dally-Upload-Encoding` says), its announced length and its coding; a frame that does not
/// continue it exactly is refused. Memory is bounded: past ``maxBytes`` the partials touched
/// longest ago are dropped (their gateway then sends those bodies from their start). Partials
/// are not kept across a restart and not shared between cloud nodes: losing one costs bytes,
/// never correctness.
actor PartialUploads {
    struct Partial {
        var coding: String
        var length: Int
        var bytes: [UInt8]
        var touched: Int64
    }

    /// Why a frame was not taken.
    enum Refusal: Error {
        /// The partial held ends at `held`, not where the frame starts.
        case offset(held: Int)
    }

    let maxBytes: Int
    private var partials: [ContentHash: Partial] = [:]
    private var held = 0
    private var tick: Int64 = 0

    init(maxBytes: Int = 64 << 20) {
        self.maxBytes = maxBytes
    }

    /// Where each of `hashes` that has a partial ends.
    func offsets(_ hashes: [ContentHash]) -> [ContentHash: Int] {
        var found: [ContentHash: Int] = [:]
        for hash in hashes {
            if let partial = partials[hash], !partial.bytes.isEmpty { found[hash] = partial.bytes.count }
        }
        return found
    }

    /// Where `hash`'s partial body of `length` bytes in `coding` ends (0 when none is held):
    /// what an empty frame asks, changing nothing.
    func end(of hash: ContentHash, length: Int, coding: String) -> Int {
        guard let partial = partials[hash], partial.length == length, partial.coding == coding else { return 0 }
        return partial.bytes.count
    }

    /// Appends `piece` at `offset` of `hash`'s body of `length` bytes in `coding`; where the
    /// partial now ends. A frame at offset 0 starts the chunk anew (dropping a partial of
    /// another length or coding); any other offset must be where the partial ends.
    func append(_ piece: [UInt8], to hash: ContentHash, at offset: Int, length: Int, coding: String)
        throws(Refusal) -> Int
    {
        tick += 1
        var partial: Partial
        if let existing = partials[hash], existing.length == length, existing.coding == coding,
            existing.bytes.count == offset
        {
            partial = existing
        } else if offset == 0 {
            partial = Partial(coding: coding, length: length, bytes: [], touched: tick)
            if let existing = partials[hash] { held -= existing.bytes.count }
        } else {
            let existing = partials[hash]
            let matches = existing.map { $0.length == length && $0.coding == coding } ?? false
            throw .offset(held: matches ? existing?.bytes.count ?? 0 : 0)
        }
        let room = length - partial.bytes.count
        partial.bytes.append(contentsOf: piece.prefix(room))
        held += min(piece.count, room)
        partial.touched = tick
        partials[hash] = partial
        evict(keeping: hash)
        return partial.bytes.count
    }

    /// Removes and returns `hash`'s partial once it is whole.
    func takeWhole(_ hash: ContentHash) -> Partial? {
        guard let partial = partials[hash], partial.bytes.count == partial.length else { return nil }
        partials[hash] = nil
        held -= partial.bytes.count
        return partial
    }

    /// Drops `hash`'s partial (its bytes did not hash to it).
    func drop(_ hash: ContentHash) {
        if let partial = partials.removeValue(forKey: hash) { held -= partial.bytes.count }
    }

    private func evict(keeping kept: ContentHash) {
        while held > maxBytes {
            guard let oldest = partials.filter({ $0.key != kept }).min(by: { $0.value.touched < $1.value.touched })
            else { return }
            drop(oldest.key)
        }
    }
}
