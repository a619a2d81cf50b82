import Foundation
import Logging
import Synchronization
import Testing

@testable import DallyLogging

/// `log_format = "json"`: one object per line, the fixed fields first, metadata as fields.
@Suite("JSON log lines")
struct JSONLogHandlerTests {
    final class Lines: Sendable {
        let collected = Mutex<[String]>([])
        func add(_ bytes: [UInt8]) { collected.withLock { $0.append(String(decoding: bytes, as: UTF8.self)) } }
        var all: [String] { collected.withLock { $0 } }
    }

    @Test func aRecordIsOneJSONObjectOnOneLine() throws {
        let lines = Lines()
        var logger = Logger(label: "dally.gateway") { JSONLogHandler(label: $0, level: .info, write: lines.add) }
        logger[metadataKey: "gateway"] = "gw-a"
        logger.info("gateway \"listening\"\nnow", metadata: ["port": "8080", "tables": ["a", "b"], "level": "spoof"])
        logger.debug("not at info")
        #expect(lines.all.count == 1)
        let line = try #require(lines.all.first)
        #expect(line.hasSuffix("}\n") && line.dropLast().contains("\n") == false)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["level"] as? String == "info")
        #expect(object["label"] as? String == "dally.gateway")
        #expect(object["message"] as? String == "gateway \"listening\"\nnow")
        #expect(object["port"] as? String == "8080" && object["gateway"] as? String == "gw-a")
        #expect(object["tables"] as? [String] == ["a", "b"])
        #expect(line.hasPrefix(#"{"time":""#))
    }

    @Test func timesAreUTCWithMilliseconds() {
        #expect(JSONLogHandler.timestamp(Date(timeIntervalSince1970: 1_795_600_000.042)) == "2026-11-25T09:46:40.042Z")
        #expect(JSONLogHandler.timestamp(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
    }
}
