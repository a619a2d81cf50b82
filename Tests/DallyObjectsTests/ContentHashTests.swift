import DallyObjects
import Testing

@Suite("ContentHash")
struct ContentHashTests {
    static let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

    @Test("SHA-256 of \"abc\" is the FIPS 180-2 vector, from bytes, raw memory and a stream")
    func knownVector() {
        let bytes = Array("abc".utf8)
        #expect(ContentHash.of(bytes).hex == Self.abc)
        #expect(bytes.withUnsafeBytes { ContentHash.of($0) }.hex == Self.abc)
        var stream = StreamingHash()
        stream.update([UInt8(ascii: "a")])
        bytes.dropFirst().withUnsafeBytes { stream.update($0) }
        #expect(stream.count == 3)
        #expect(stream.finalize().hex == Self.abc)
        #expect(ContentHash.of([UInt8]()).hex == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test("Hex round trip; upper case is read and written lower")
    func hexRoundTrip() throws {
        let hash = try #require(ContentHash(hex: Self.abc))
        #expect(hash.hex == Self.abc)
        #expect(hash.description == Self.abc)
        #expect(hash.bytes.count == ContentHash.byteCount)
        #expect(ContentHash(hex: Self.abc.uppercased()) == hash)
        #expect(ContentHash(digest: hash.bytes) == hash)
    }

    @Test("Bad hex is rejected", arguments: [
        "", "ba78", abcPrefix63, abcPrefix63 + "dd", abcPrefix63 + "g",
        abcPrefix63 + " ", " " + abcPrefix63, "../" + String(repeating: "0", count: 61),
        String(repeating: "é", count: 32),
    ])
    func badHex(text: String) {
        #expect(ContentHash(hex: text) == nil)
    }

    @Test("A digest must have 32 bytes")
    func digestLength() {
        #expect(ContentHash(digest: [UInt8](repeating: 0, count: 31)) == nil)
        #expect(ContentHash(digest: [UInt8](repeating: 0, count: 33)) == nil)
        #expect(ContentHash(digest: [UInt8](repeating: 0, count: 32)) != nil)
    }

    @Test("Ordered by bytes")
    func ordering() throws {
        let low = try #require(ContentHash(hex: String(repeating: "0", count: 63) + "1"))
        let high = try #require(ContentHash(hex: "1" + String(repeating: "0", count: 63)))
        #expect(low < high)
        #expect(!(high < low))
    }
}

/// The first 63 hex digits of SHA-256("abc"): one digit short.
private let abcPrefix63 = String(ContentHashTests.abc.dropLast())
