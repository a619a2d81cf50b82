import DallyCore
import DallyObjects

/// Checks an object before the cloud records it: its chunks, read in the manifest's order, must
/// be the sizes it says and hash together to the object's hash.
///
/// Each chunk's own hash was checked when it was stored; this check is what stops a manifest
/// that lists real chunks in the wrong order, or someone else's chunks, from naming an object
/// with content it does not have. Memory stays at one chunk, whatever the object's size.
enum ObjectVerifier {
    /// Chunks a manifest lists that the chunk store does not hold.
    struct MissingChunks: Error {
        let hashes: [ContentHash]
    }

    /// - Throws: ``MissingChunks`` for a chunk that is gone (a collection removed it since it
    ///   was found present), `bad_request` for a chunk whose size the manifest misstates,
    ///   `hash_mismatch` when the content's hash is not the manifest's.
    static func verify(_ manifest: ObjectManifest, chunks: any ChunkStore) async throws {
        var hasher = StreamingHash()
        for (i, entry) in manifest.chunks.enumerated() {
            guard let bytes = try await chunks.get(entry.hash) else { throw MissingChunks(hashes: [entry.hash]) }
            guard bytes.count == entry.size else {
                throw DallyError(
                    .badRequest, "chunks[\(i)] has \(bytes.count) bytes, not the \(entry.size) the manifest says",
                    field: "chunks")
            }
            hasher.update(bytes)
        }
        let content = hasher.finalize()
        guard content == manifest.hash else {
            throw DallyError(
                .hashMismatch,
                "the listed chunks hash to \(content.hex), not \(manifest.hash.hex); nothing was stored", field: "hash")
        }
    }
}
