import DallyObjects
import Testing

@Suite("ByteRange")
struct ByteRangeTests {
    typealias Outcome = ByteRange.Outcome

    @Test("The three forms of one range", arguments: [
        ("bytes=0-499", Outcome.partial(0...499)),
        ("bytes=500-999", .partial(500...999)),
        ("bytes=0-0", .partial(0...0)),
        ("bytes=999-999", .partial(999...999)),
        ("bytes=900-", .partial(900...999)),
        ("bytes=0-", .partial(0...999)),
        ("bytes=-100", .partial(900...999)),
        ("bytes=-1", .partial(999...999)),
        ("bytes=-1000", .partial(0...999)),
    ])
    func forms(header: String, expected: Outcome) {
        #expect(ByteRange.parse(header, size: 1000) == expected)
    }

    @Test("The last position and the suffix are clamped to the object", arguments: [
        ("bytes=500-5000", Outcome.partial(500...999)),
        ("bytes=-5000", .partial(0...999)),
        ("bytes=0-99999999999999999999999", .partial(0...999)),
        ("bytes=-99999999999999999999999", .partial(0...999)),
    ])
    func clamped(header: String, expected: Outcome) {
        #expect(ByteRange.parse(header, size: 1000) == expected)
    }

    @Test("Ranges that select nothing are unsatisfiable", arguments: [
        "bytes=1000-", "bytes=1000-1000", "bytes=5000-6000", "bytes=-0", "bytes=99999999999999999999999-",
    ])
    func unsatisfiable(header: String) {
        #expect(ByteRange.parse(header, size: 1000) == .unsatisfiable)
    }

    @Test("An empty object: every range misses but a non-zero suffix, which selects the (empty) whole")
    func emptyObject() {
        #expect(ByteRange.parse("bytes=0-", size: 0) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=0-0", size: 0) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=-0", size: 0) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=-5", size: 0) == .whole)
    }

    @Test("Whitespace and the unit's case are tolerated", arguments: [
        " bytes=0-9 ", "bytes = 0-9", "bytes=\t0-9", "bytes=0 - 9", "BYTES=0-9", "Bytes=0-9", "bytes=0-9,", "bytes=,0-9",
    ])
    func tolerant(header: String) {
        #expect(ByteRange.parse(header, size: 1000) == .partial(0...9))
    }

    @Test("Headers to ignore: another unit, several ranges, garbage", arguments: [
        "", "bytes", "bytes=", "bytes=-", "bytes=,", "items=0-9", "bytes 0-9", "bytes=0-9,20-29", "bytes=0-9, -5",
        "bytes=a-b", "bytes=0x10-", "bytes=+5-9", "bytes=-+5", "bytes=5", "bytes=9-0", "bytes=1 2-3", "bytes=0-9-",
        "bytes=--5", "bytes=٣-٤", "bytes=0-9;x",
    ])
    func ignored(header: String) {
        #expect(ByteRange.parse(header, size: 1000) == .whole)
    }

    @Test("A negative size is read as an empty object")
    func negativeSize() {
        #expect(ByteRange.parse("bytes=0-", size: -1) == .unsatisfiable)
    }

    @Test("Content-Range values")
    func contentRange() {
        #expect(ByteRange.contentRange(0...499, size: 1000) == "bytes 0-499/1000")
        #expect(ByteRange.contentRange(999...999, size: 1000) == "bytes 999-999/1000")
        #expect(ByteRange.unsatisfiedContentRange(size: 1000) == "bytes */1000")
        #expect(ByteRange.unsatisfiedContentRange(size: 0) == "bytes */0")
    }
}
