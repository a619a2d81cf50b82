import DallyObjects
import Testing

@testable import DallySyncEngine

/// An upload walk's bookkeeping, without a cloud: what it asks about, how far the prefix known
/// to be in the cloud reaches after an ask and after each chunk, and what a resume skips.
@Suite("ChunkWalk")
struct ChunkWalkTests {
    let a = ContentHash.of(Array("a".utf8))
    let b = ContentHash.of(Array("b".utf8))
    let c = ContentHash.of(Array("c".utf8))
    let d = ContentHash.of(Array("d".utf8))

    /// a b a c d: chunk a repeats, so four distinct chunks of sizes 10, 20, 30, 40.
    func manifest() throws -> ObjectManifest {
        try ObjectManifest(
            hash: ContentHash.of(Array("object".utf8)), size: 110,
            chunks: [
                ChunkEntry(hash: a, size: 10), ChunkEntry(hash: b, size: 20), ChunkEntry(hash: a, size: 10),
                ChunkEntry(hash: c, size: 30), ChunkEntry(hash: d, size: 40),
            ])
    }

    @Test func aFreshWalkAsksAboutEveryDistinctChunkOnce() throws {
        var walk = ChunkWalk(manifest: try manifest(), chunksDone: 0)
        #expect(walk.unique == [a, b, c, d])
        let step1 = walk.asking(round: 0)
        #expect(step1 == [a, b, c, d])
        #expect(walk.inOrder([d, b]) == [b, d])
    }

    @Test func anAskConfirmsThePrefixBeforeTheFirstMissingChunk() throws {
        var walk = ChunkWalk(manifest: try manifest(), chunksDone: 0)
        _ = walk.asking(round: 0)
        let step2 = walk.confirm(missing: [c, d], round: 0)
        #expect(step2)
        #expect(walk.done == 2)
        #expect(walk.bytesDone == 30)
        // Nothing new confirmed: nothing to persist.
        let step3 = walk.confirm(missing: [c, d], round: 0)
        #expect(!step3)
    }

    @Test func eachChunkSentMovesThePrefixToTheNextMissingOne() throws {
        var walk = ChunkWalk(manifest: try manifest(), chunksDone: 0)
        let missing = [b, d]
        let step4 = walk.confirm(missing: missing, round: 0)
        #expect(step4)
        #expect(walk.done == 1)
        walk.sent(0, of: missing)
        #expect(walk.done == 3)
        walk.sent(1, of: missing)
        #expect(walk.done == 4)
    }

    @Test func aResumedWalkAsksOnlyPastItsPrefix() throws {
        var walk = ChunkWalk(manifest: try manifest(), chunksDone: 3)
        let step5 = walk.asking(round: 0)
        #expect(step5 == [d])
        #expect(walk.bytes(of: [a, c]) == 40)
        // A stored prefix past the end (a shorter manifest?) is clamped.
        #expect(ChunkWalk(manifest: try manifest(), chunksDone: 99).done == 4)
    }

    @Test func aSecondRoundStartsOverAndPersistsEvenWhenNothingMoved() throws {
        var walk = ChunkWalk(manifest: try manifest(), chunksDone: 4)
        let step6 = walk.asking(round: 1)
        #expect(step6 == [a, b, c, d])
        #expect(walk.done == 0)
        let step7 = walk.confirm(missing: [a], round: 1)
        #expect(step7)
        #expect(walk.done == 0)
    }
}
