import DallyCore
import DallyObjects
import Testing

private let referenceHex = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

@Suite("ObjectReference")
struct ObjectReferenceTests {
    static let hex = referenceHex

    @Test("JSON round trip, through the value and through the stored text")
    func roundTrip() throws {
        let reference = ObjectReference(hash: try #require(ContentHash(hex: Self.hex)), size: 3_000_000, chunks: 3)
        #expect(reference.jsonText == "{\"hash\":\"\(Self.hex)\",\"size\":3000000,\"chunks\":3}")
        #expect(try ObjectReference(json: reference.json, field: "photo") == reference)
        #expect(ObjectReference(jsonText: reference.jsonText) == reference)
    }

    @Test("Shapes that are not a reference throw wrong_type naming the column", arguments: [
        JSONValue.null, .string(referenceHex), .int(3), .array([]), .object([]),
        ["hash": .string(referenceHex), "size": 1],
        ["hash": .string(referenceHex), "chunks": 1],
        ["size": 1, "chunks": 1],
        ["hash": "abc", "size": 1, "chunks": 1],
        ["hash": .string(referenceHex), "size": -1, "chunks": 1],
        ["hash": .string(referenceHex), "size": 1, "chunks": -1],
        ["hash": .string(referenceHex), "size": "1", "chunks": 1],
        ["hash": .string(referenceHex), "size": 1.5, "chunks": 1],
        ["hash": .string(referenceHex), "size": 1, "chunks": .int(Int64(Int32.max) + 1)],
    ])
    func badShapes(json: JSONValue) {
        #expect {
            try ObjectReference(json: json, field: "photo")
        } throws: { error in
            guard let error = error as? DallyError else { return false }
            return error.code == .wrongType && error.field == "photo"
        }
    }

    @Test("Stored text that is not a reference reads as nil")
    func badText() {
        #expect(ObjectReference(jsonText: "") == nil)
        #expect(ObjectReference(jsonText: "{") == nil)
        #expect(ObjectReference(jsonText: "{\"hash\":\"\(Self.hex)\"}") == nil)
    }

    @Test("A row write names the hash alone; anything else is wrong_type")
    func requestedHash() throws {
        #expect(try ObjectReference.requestedHash(["hash": .string(Self.hex)], field: "f").hex == Self.hex)
        #expect(throws: DallyError.self) { try ObjectReference.requestedHash(["hash": "nope"], field: "f") }
        #expect(throws: DallyError.self) { try ObjectReference.requestedHash(.string(Self.hex), field: "f") }
    }
}
