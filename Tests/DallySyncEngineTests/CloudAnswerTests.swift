import DallyCore
import NIOHTTP1
import Testing

@testable import DallySyncEngine

/// How an answer's status and body become a ``CloudError``, and which errors mean the cloud
/// itself gave no answer (the probe then looks for it every `down_probe_interval`).
@Suite("Cloud answers: errors from statuses and bodies")
struct CloudAnswerTests {
    private func error(_ body: String, status: HTTPResponseStatus) -> CloudError? {
        do {
            _ = try CloudClient.json(Array(body.utf8), status: status)
            return nil
        } catch {
            return error
        }
    }

    @Test func aDallyErrorKeepsItsCode() throws {
        let refused = try #require(error(#"{"error":{"code":"malformed_json","message":"no"}}"#, status: .badRequest))
        guard case .refused(400, .malformedJSON?, "no") = refused else { Issue.record("\(refused)"); return }
        #expect(!refused.cloudDidNotAnswer)
    }

    /// A proxy's own page for a cloud it cannot reach is refused with its status, and counts
    /// as no answer from the cloud; the same page with a success status is unreadable.
    @Test func aProxysPageIsRefusedWithItsStatus() throws {
        for status in [HTTPResponseStatus.badGateway, .serviceUnavailable, .gatewayTimeout] {
            let refused = try #require(error("<html>Bad Gateway</html>", status: status))
            guard case .refused(Int(status.code), nil, let message) = refused else { Issue.record("\(refused)"); continue }
            #expect(message.contains("<html>Bad Gateway</html>"))
            #expect(refused.cloudDidNotAnswer)
        }
        // The cloud's own 503 is an answer from a cloud that is there.
        let shuttingDown = try #require(
            error(#"{"error":{"code":"shutting_down","message":"bye"}}"#, status: .serviceUnavailable))
        guard case .refused(503, .shuttingDown?, _) = shuttingDown else { Issue.record("\(shuttingDown)"); return }
        #expect(!shuttingDown.cloudDidNotAnswer)
        let tooLarge = try #require(error("<html>413 Request Entity Too Large</html>", status: .payloadTooLarge))
        guard case .refused(413, nil, _) = tooLarge else { Issue.record("\(tooLarge)"); return }
        #expect(!tooLarge.cloudDidNotAnswer)
        let unreadable = try #require(error("<html>fine</html>", status: .ok))
        guard case .badAnswer = unreadable else { Issue.record("\(unreadable)"); return }
        #expect(!unreadable.cloudDidNotAnswer)
        #expect(CloudError.unreachable("connection refused").cloudDidNotAnswer)
    }

    /// A page of several lines is told on one: each line of it broke the text log line.
    @Test func aProxysPageIsToldOnOneLine() throws {
        let page = "<!DOCTYPE HTML>\n<html lang=\"en\">\n    <head>\r\n        <title>Error response</title>"
        let refused = try #require(error(page, status: .notImplemented))
        guard case .refused(501, nil, let message) = refused else { Issue.record("\(refused)"); return }
        #expect(message == #"an answer that is not Dally's: <!DOCTYPE HTML> <html lang="en"> <head> <title>Error response</title>"#)
    }
}
