import Foundation
import Logging
import Synchronization
import Testing

@testable import DallySyncEngine

@Suite("The cloud's clock against the gateway's")
struct CloudClockOffsetTests {
    @Test(arguments: [
        ("Sun, 06 Nov 1994 08:49:37 GMT", Int64(784_111_777_000)),
        ("Thu, 01 Jan 1970 00:00:00 GMT", 0),
        ("Thu, 29 Feb 2024 23:59:59 GMT", 1_709_251_199_000),
        ("Mon, 30 Nov 2026 17:22:41 GMT", 1_796_059_361_000),
    ])
    func anHTTPDateReadsAsTheMillisecondsFoundationReads(_ text: String, _ expected: Int64) throws {
        #expect(HTTPDate.milliseconds(text) == expected)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let date = try #require(formatter.date(from: text))
        #expect(Int64(date.timeIntervalSince1970 * 1000) == expected)
    }

    @Test(arguments: [
        "", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nox 1994 08:49:37 GMT", "Sun, 6 Nov 1994 08:49:37 GMT ",
        "Sunday, 06-Nov-94 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 32 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 19x4 08:49:37 GMT", "Sat, 31 Feb 2024 08:49:37 GMT",
    ])
    func anythingElseIsNotADate(_ text: String) {
        #expect(HTTPDate.milliseconds(text) == nil)
    }

    @Test func theOffsetIsTheCloudsClockLessTheGateways() {
        let gatewayNow = Mutex<Int64>(784_111_777_000 + 3_600_000)
        let offset = CloudClockOffset(now: { gatewayNow.withLock { $0 } }, logger: Logger(label: "test"))
        #expect(offset.milliseconds == nil)
        offset.heard(date: nil)
        offset.heard(date: "not a date")
        #expect(offset.milliseconds == nil)
        // The gateway an hour ahead: the cloud's second, taken at its middle.
        offset.heard(date: "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(offset.milliseconds == -3_600_000 + 500)
        gatewayNow.withLock { $0 = 784_111_777_000 }
        offset.heard(date: "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(offset.milliseconds == 500)
    }
}
