import NIOCore
import Testing

@testable import DallySyncEngine

/// Lines cut out of a notify stream whatever the pieces it arrives in.
@Suite("StreamLines")
struct StreamLinesTests {
    private func text(_ lines: [[UInt8]]) -> [String] { lines.map { String(decoding: $0, as: UTF8.self) } }

    @Test func linesEndedInOnePieceComeOutInOrder() throws {
        var lines = StreamLines(maxLine: 100)
        #expect(text(try lines.append(ByteBuffer(string: "{\"a\":1}\n{\"b\":2}\n"))) == ["{\"a\":1}", "{\"b\":2}"])
        #expect(lines.unfinished == 0)
    }

    @Test func aLineSplitAcrossPiecesComesOutWhenItsNewlineArrives() throws {
        var lines = StreamLines(maxLine: 100)
        #expect(try lines.append(ByteBuffer(string: "{\"ver")).isEmpty)
        #expect(lines.unfinished == 5)
        #expect(text(try lines.append(ByteBuffer(string: "sions\":{}}\n{\"x"))) == ["{\"versions\":{}}"])
        #expect(text(try lines.append(ByteBuffer(string: "\":3}\n"))) == ["{\"x\":3}"])
        #expect(lines.unfinished == 0)
    }

    @Test func emptyLinesAreSkipped() throws {
        var lines = StreamLines(maxLine: 100)
        #expect(text(try lines.append(ByteBuffer(string: "\n\n1\n\n"))) == ["1"])
    }

    @Test func aLineOverTheLimitIsRefusedWhetherEndedOrNot() {
        var ended = StreamLines(maxLine: 4)
        #expect(throws: StreamLines.TooLong.self) { try ended.append(ByteBuffer(string: "12345\n")) }
        var growing = StreamLines(maxLine: 4)
        #expect(throws: Never.self) { try growing.append(ByteBuffer(string: "123")) }
        #expect(throws: StreamLines.TooLong.self) { try growing.append(ByteBuffer(string: "45")) }
        var exact = StreamLines(maxLine: 4)
        #expect(text((try? exact.append(ByteBuffer(string: "1234\n"))) ?? []) == ["1234"])
    }
}
