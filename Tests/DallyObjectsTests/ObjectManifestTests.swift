import DallyCore
import DallyObjects
import Testing

@Suite("ObjectManifest")
struct ObjectManifestTests {
    /// An object of chunks of 100, 200 and 300 bytes (offsets 0, 100, 300; size 600).
    static func sample() throws -> ObjectManifest {
        let chunks = [100, 200, 300].enumerated().map { i, size in
            ChunkEntry(hash: ContentHash.of([UInt8(i)]), size: size)
        }
        return try ObjectManifest(hash: ContentHash.of(Array("whole".utf8)), size: 600, chunks: chunks)
    }

    @Test("JSON round trip")
    func jsonRoundTrip() throws {
        let manifest = try Self.sample()
        let text = manifest.json.jsonText
        #expect(text.hasPrefix("{\"hash\":\"\(manifest.hash.hex)\",\"size\":600,\"chunks\":[[\""))
        #expect(try ObjectManifest(json: JSONParser.parse(text)) == manifest)
        #expect(manifest.reference == ObjectReference(hash: manifest.hash, size: 600, chunks: 3))
    }

    @Test("Storage round trip: 36 bytes per chunk")
    func storageRoundTrip() throws {
        let manifest = try Self.sample()
        let bytes = manifest.storageBytes
        #expect(bytes.count == 3 * 36)
        #expect(Array(bytes[32..<36]) == [0, 0, 0, 100])
        #expect(ObjectManifest(hash: manifest.hash, size: 600, storage: bytes) == manifest)
        #expect(ObjectManifest(hash: manifest.hash, size: 601, storage: bytes) == nil)
        #expect(ObjectManifest(hash: manifest.hash, size: 600, storage: bytes.dropLast()) == nil)
    }

    @Test("An empty object has no chunks")
    func empty() throws {
        let manifest = try ObjectManifest(hash: ContentHash.of([UInt8]()), size: 0, chunks: [])
        #expect(manifest.storageBytes.isEmpty)
        #expect(ObjectManifest(hash: manifest.hash, size: 0, storage: []) == manifest)
        #expect(manifest.offsets == [0])
    }

    @Test("The sizes must add up, and each chunk be 1…maxChunkBytes")
    func sizes() throws {
        let hash = ContentHash.of([UInt8]())
        func rejected(size: Int64, chunks: [Int]) -> Bool {
            do throws(DallyError) {
                _ = try ObjectManifest(hash: hash, size: size, chunks: chunks.map { ChunkEntry(hash: hash, size: $0) })
                return false
            } catch {
                return error.code == .badRequest
            }
        }
        #expect(rejected(size: 599, chunks: [100, 200, 300]))
        #expect(rejected(size: 601, chunks: [100, 200, 300]))
        #expect(rejected(size: 1, chunks: []))
        #expect(rejected(size: 100, chunks: [100, 0]))
        #expect(rejected(size: 100, chunks: [101, -1]))
        #expect(rejected(size: Int64(ObjectManifest.maxChunkBytes) + 1, chunks: [ObjectManifest.maxChunkBytes + 1]))
        #expect(!rejected(size: Int64(ObjectManifest.maxChunkBytes), chunks: [ObjectManifest.maxChunkBytes]))
    }

    @Test("Manifests received with a bad shape are bad_request", arguments: [
        JSONValue.null,
        ["size": 1, "chunks": []],
        ["hash": "x", "size": 0, "chunks": []],
        ["hash": .string(ContentHash.of([UInt8]()).hex), "size": -1, "chunks": []],
        ["hash": .string(ContentHash.of([UInt8]()).hex), "size": 0],
        ["hash": .string(ContentHash.of([UInt8]()).hex), "size": 1, "chunks": [[.string(ContentHash.of([UInt8]()).hex)]]],
        ["hash": .string(ContentHash.of([UInt8]()).hex), "size": 1, "chunks": [["nothex", 1]]],
        ["hash": .string(ContentHash.of([UInt8]()).hex), "size": 1, "chunks": [[.string(ContentHash.of([UInt8]()).hex), 2]]],
    ])
    func badJSON(json: JSONValue) {
        #expect {
            try ObjectManifest(json: json)
        } throws: { error in
            (error as? DallyError)?.code == .badRequest
        }
    }

    @Test("Offsets and the chunks covering a range", arguments: [
        // (range, first chunk, its offset, chunk count)
        (0...0, 0, 0, 1),
        (0...99, 0, 0, 1),
        (0...100, 0, 0, 2),
        (50...150, 0, 0, 2),
        (100...299, 1, 100, 1),
        (150...160, 1, 100, 1),
        (299...300, 1, 100, 2),
        (300...599, 2, 300, 1),
        (599...599, 2, 300, 1),
        (0...599, 0, 0, 3),
        (99...300, 0, 0, 3),
    ] as [(ClosedRange<Int64>, Int, Int64, Int)])
    func covering(range: ClosedRange<Int64>, first: Int, offset: Int64, count: Int) throws {
        let manifest = try Self.sample()
        #expect(manifest.offsets == [0, 100, 300, 600])
        let covered = manifest.chunks(covering: range)
        #expect(covered.first == first)
        #expect(covered.offset == offset)
        #expect(covered.chunks.count == count)
        #expect(covered.chunks.first == manifest.chunks[first])
    }
}
