import AsyncHTTPClient
import DallyCore
import DallyFrugal
import DallyObjects
import NIOCore

/// The trace's objects as the runs need them: each one's SHA-256, computed once per trace
/// (about 130 MB of seeded bytes an hour) and shared by every run and check.
struct FrugalObjectHashes: Sendable {
    let hashes: [TraceObject: ContentHash]

    init(trace: FrugalTrace) {
        var hashes: [TraceObject: ContentHash] = [:]
        for object in trace.storedObjects { hashes[object] = object.synthetic.hash }
        self.hashes = hashes
    }

    func hash(_ object: TraceObject) throws -> ContentHash {
        guard let hash = hashes[object] else { throw BenchError("object of \(object.size) bytes, seed \(object.seed), was not hashed") }
        return hash
    }

    /// The row reference of `object` stored as one chunk, as the baselines store it: the text an
    /// `OBJECT` column carries in a batch.
    func singleChunkReference(_ object: TraceObject) -> JSONValue {
        guard let hash = hashes[object] else { return .null }
        return .string(ObjectReference(hash: hash, size: Int64(object.size), chunks: 1).jsonText)
    }
}
