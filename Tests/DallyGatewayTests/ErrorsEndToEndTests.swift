import DallyCore
import Testing

/// Every documented error code, through real HTTP; and that a refused request changes nothing.
@Suite("End to end: errors")
struct ErrorsEndToEndTests {
    struct Case: Sendable, CustomStringConvertible {
        let method: String
        let path: String
        var token: String? = LiveGateway.clientToken
        var body: String? = nil
        var headers: [(String, String)] = []
        let status: Int
        let code: String
        var description: String { "\(method) \(path) → \(status) \(code)" }
    }

    static let cases: [Case] = [
        Case(method: "PUT", path: "/v1/tables/orders/rows/o1", body: #"{"values":"#, status: 400, code: "malformed_json"),
        Case(method: "PUT", path: "/v1/tables/orders/rows/o1", body: #"{"values":{},"extra":1}"#, status: 400, code: "bad_request"),
        Case(method: "PUT", path: "/v1/tables/orders/rows/o1", status: 400, code: "bad_request"),
        Case(method: "PUT", path: "/v1/tables/orders/rows/bad%20id", body: #"{"values":{}}"#, status: 400, code: "invalid_id"),
        Case(method: "GET", path: "/v1/tables/orders/rows?sinse=3", status: 400, code: "bad_query"),
        Case(method: "GET", path: "/v1/tables/orders/rows?since=-1", status: 400, code: "bad_query"),
        Case(method: "GET", path: "/v1/tables/orders/rows?limit=21", status: 400, code: "bad_query"),
        Case(method: "GET", path: "/v1/tables/orders/rows?where=items:1", status: 400, code: "bad_query"),
        Case(method: "GET", path: "/v1/tables/orders/rows?where=total:nan", status: 400, code: "bad_query"),
        Case(method: "GET", path: "/v1/tables/orders/rows?where=total:1e999", status: 400, code: "bad_query"),
        Case(method: "GET", path: "/v1/tables/orders/changes?wait=soon", status: 400, code: "bad_query"),
        Case(method: "PUT", path: "/v1/tables/orders/rows/o1", token: nil, body: #"{"values":{}}"#, status: 401, code: "unauthorized"),
        Case(method: "PUT", path: "/v1/tables/orders/rows/o1", token: "wrong-token-0123456789", body: #"{"values":{}}"#, status: 401, code: "unauthorized"),
        Case(method: "GET", path: "/stats", token: nil, status: 401, code: "unauthorized"),
        Case(method: "PUT", path: "/v1/tables/orders/rows/o1", token: LiveGateway.readerToken, body: #"{"values":{}}"#, status: 403, code: "forbidden"),
        Case(method: "GET", path: "/v1/tables/notes/rows", token: LiveGateway.readerToken, status: 403, code: "forbidden"),
        Case(method: "GET", path: "/v1/tables/orders/rows", token: LiveGateway.adminToken, status: 403, code: "forbidden"),
        Case(method: "GET", path: "/stats", status: 403, code: "forbidden"),
        Case(method: "PUT", path: "/v1/tables/nope/rows/o1", body: #"{"values":{}}"#, status: 404, code: "unknown_table"),
        Case(method: "GET", path: "/v1/changes?tables=orders,nope", status: 404, code: "unknown_table"),
        Case(method: "GET", path: "/v1/tables/orders/rows/missing", status: 404, code: "not_found"),
        Case(method: "PATCH", path: "/v1/tables/orders/rows/missing", body: #"{"values":{}}"#, status: 404, code: "not_found"),
        Case(method: "GET", path: "/v2/nothing", status: 404, code: "not_found"),
        Case(method: "POST", path: "/v1/tables/orders/rows/o1", body: #"{"values":{}}"#, status: 405, code: "method_not_allowed"),
        Case(method: "PATCH", path: "/v1/tables/orders/batch", body: #"{"saved":[]}"#, status: 405, code: "method_not_allowed"),
        Case(method: "DELETE", path: "/stats", token: LiveGateway.adminToken, status: 405, code: "method_not_allowed"),
        Case(method: "PUT", path: "/v1/tables/orders/rows/o1", body: #"{"values":{},"expected_seq":7}"#, status: 409, code: "version_mismatch"),
        Case(method: "PUT", path: "/v1/tables/orders/rows/o1", body: #"{"values":{"customer":"\#(String(repeating: "x", count: 3000))"}}"#, status: 413, code: "body_too_large"),
        Case(method: "POST", path: "/v1/tables/orders/batch", body: #"{"deleted":[\#((0..<51).map { "\"r\($0)\"" }.joined(separator: ","))]}"#, status: 413, code: "too_many_rows"),
        Case(method: "PUT", path: "/v1/tables/orders/rows/o1", body: #"{"values":{}}"#, headers: [("Content-Encoding", "gzip")], status: 415, code: "unsupported_encoding"),
        Case(method: "POST", path: "/v1/tables/orders/batch", body: "not zstd", headers: [("Content-Encoding", "zstd")], status: 400, code: "bad_encoding"),
        Case(method: "PUT", path: "/v1/tables/orders/rows/o1", body: #"{"values":{"colour":"red"}}"#, status: 422, code: "unknown_column"),
        Case(method: "PUT", path: "/v1/tables/orders/rows/o1", body: #"{"values":{"qty":1.5}}"#, status: 422, code: "wrong_type"),
        Case(method: "PUT", path: "/v1/tables/orders/rows/o1", body: #"{"values":{"paid":"yes"}}"#, status: 422, code: "wrong_type"),
        // A query parameter a route does not take is refused, not ignored: `?expected_seq=0`
        // would otherwise pass for a create-only write that it is not.
        Case(method: "PUT", path: "/v1/tables/orders/rows/o1?expected_seq=0", body: #"{"values":{}}"#, status: 400, code: "bad_query"),
        Case(method: "POST", path: "/v1/tables/orders/batch?all_or_nothing=true", body: #"{"created":[]}"#, status: 400, code: "bad_query"),
        Case(method: "GET", path: "/v1/changes?tables=&since=0", body: nil, status: 400, code: "bad_query"),
        // Given twice, a parameter was read as its first; `tables=` on one table's own feed was
        // ignored.
        Case(method: "GET", path: "/v1/tables/orders/changes?since=0&since=40", status: 400, code: "bad_query"),
        Case(method: "GET", path: "/v1/tables/orders/changes?tables=notes", status: 400, code: "bad_query"),
        // Text with U+0000: the replica's text would end at it, and PostgreSQL's refuses it.
        Case(method: "PUT", path: "/v1/tables/orders/rows/o1", body: #"{"values":{"customer":"a\u0000b"}}"#, status: 422, code: "wrong_type"),
    ]

    @Test(arguments: cases)
    func refusedWithTheRightStatusAndCodeAndNothingChanges(_ c: Case) async throws {
        try await LiveGateway.run(LiveGateway.config()) { gw in
            let reply = try await gw.send(.init(rawValue: c.method), c.path, token: c.token, body: c.body, headers: c.headers)
            #expect(reply.status == c.status, "\(reply.body)")
            #expect(reply.errorCode == c.code, "\(reply.body)")
            #expect(reply.headers["Content-Type"].first == "application/json")
            if case .string(let message)? = reply.json["error"]?["message"] { #expect(!message.isEmpty) } else {
                Issue.record("no message in \(reply.body)")
            }
            #expect(try await gw.stats()["store"]?["last_seq"]?.int == 0)
            // The process keeps serving.
            #expect(try await gw.send(.PUT, "/v1/tables/orders/rows/after", body: #"{"values":{}}"#).status == 200)
        }
    }

    /// A route that exists answers another method `405` with what it takes; a path no route
    /// has stays `404`.
    @Test func aMethodTheRouteDoesNotTakeIsToldWhatItTakes() async throws {
        try await LiveGateway.run(LiveGateway.config()) { gw in
            let row = try await gw.send(.POST, "/v1/tables/orders/rows/o1", body: #"{"values":{}}"#)
            #expect(row.headers["Allow"].first == "DELETE, GET, HEAD, PATCH, PUT")
            #expect(row.json["error"]?["message"]?.string?.contains("POST is not allowed") == true)
            let sync = try await gw.send(.GET, "/v1/tables/orders/sync")
            #expect(sync.status == 405)
            #expect(sync.headers["Allow"].first == "POST")
            #expect(try await gw.send(.POST, "/v1/tables/orders/rows/o1/extra").status == 404)
            #expect(try await gw.send(.init(rawValue: "PURGE"), "/healthz").status == 405)
        }
    }

    /// What the HTTP parser cannot read (raw UTF-8 in the path, as curl sends it; a method HTTP
    /// does not know; a forbidden character in a header) is answered in JSON too, then the
    /// connection closes; the gateway keeps serving.
    @Test(arguments: [
        "GET /v1/tables/orders/rows/caf\u{E9} HTTP/1.1\r\nHost: x\r\n\r\n",
        "FOO /v1/tables/orders/rows/o1 HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n",
    ])
    func aRequestThatIsNotHTTPIsToldWhyInJSON(_ request: String) async throws {
        try await LiveGateway.run(LiveGateway.config()) { gw in
            let answer = await ExpectContinueEndToEndTests.exchange(port: gw.port, head: request, body: "")
            let text = answer.beforeBody + answer.afterBody
            #expect(text.hasPrefix("HTTP/1.1 400 Bad Request"), "\(text)")
            #expect(text.lowercased().contains("content-type: application/json"))
            let body = String(text.split(separator: "\r\n\r\n", maxSplits: 1).last ?? "")
            let json = try JSONParser.parse(Array(body.utf8))
            #expect(json["error"]?["code"]?.string == "bad_request")
            #expect(json["error"]?["message"]?.string?.contains("could not be read as HTTP/1.1") == true)
            #expect(try await gw.send(.GET, "/v1/tables/orders/rows/o1").status == 404)
        }
    }

    /// A head over the parser's bounds (1,000 header fields): `431 headers_too_large` in JSON.
    @Test func tooManyHeadersAreRefused431() async throws {
        try await LiveGateway.run(LiveGateway.config()) { gw in
            let fields = (0..<1_500).map { "X-Field-\($0): 1\r\n" }.joined()
            let answer = await ExpectContinueEndToEndTests.exchange(
                port: gw.port, head: "GET /healthz HTTP/1.1\r\nHost: x\r\n\(fields)\r\n", body: "")
            let text = answer.beforeBody + answer.afterBody
            #expect(text.hasPrefix("HTTP/1.1 431 Request Header Fields Too Large"), "\(text)")
            #expect(text.contains(#""code":"headers_too_large""#), "\(text)")
            let after = try await gw.send(.GET, "/healthz")
            #expect(after.status == 200)
        }
    }

    /// Sends `raw` on a connection of its own and expects it refused and closed: the answer as
    /// text, and its body (framed by its `Content-Length`) as JSON.
    static func refusedAndClosed(_ gw: LiveGateway, _ raw: String) async throws -> (text: String, body: JSONValue) {
        let (closed, text) = await KeepaliveEndToEndTests.sendThenWaitForClose(port: gw.port, raw)
        #expect(closed, "\(text)")
        let body = String(text.split(separator: "\r\n\r\n", maxSplits: 1).last ?? "")
        #expect(text.contains("Content-Length: \(body.utf8.count)\r\n"), "\(text)")
        return (text, try JSONParser.parse(Array(body.utf8)))
    }

    /// `CONNECT` gets its JSON error framed as any answer and the connection closes with it:
    /// answered by the routes, it went out as a tunnel's answer, with neither length nor body,
    /// and the client waited for the keep-alive timeout.
    @Test(arguments: ["/v1/tables/orders/rows/o1", "example.com:443"])
    func connectIsRefusedInJSONAndTheConnectionCloses(_ target: String) async throws {
        try await LiveGateway.run(LiveGateway.config()) { gw in
            let (text, body) = try await Self.refusedAndClosed(gw, "CONNECT \(target) HTTP/1.1\r\nHost: x\r\n\r\nsome tunnel bytes")
            #expect(text.hasPrefix("HTTP/1.1 405 Method Not Allowed"), "\(text)")
            #expect(body["error"]?["code"]?.string == "method_not_allowed")
            #expect(try await gw.send(.GET, "/healthz", token: nil).status == 200)
        }
    }

    /// Two `Host` headers are refused `400` (RFC 9112 §3.2: a proxy that read the other one
    /// routed the request by a host the server never saw); served before as if one.
    @Test func twoHostHeadersAreRefusedAndTheConnectionCloses() async throws {
        try await LiveGateway.run(LiveGateway.config()) { gw in
            let (text, body) = try await Self.refusedAndClosed(gw, "GET /healthz HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n")
            #expect(text.hasPrefix("HTTP/1.1 400 Bad Request"), "\(text)")
            #expect(body["error"]?["code"]?.string == "bad_request")
            #expect(body["error"]?["field"]?.string == "Host")
            // One Host, or none (HTTP/1.0 and hand-written clients): served.
            let (_, one) = await KeepaliveEndToEndTests.sendThenWaitForClose(
                port: gw.port, "GET /healthz HTTP/1.1\r\nHost: a.example\r\nConnection: close\r\n\r\n")
            #expect(one.hasPrefix("HTTP/1.1 200 OK"), "\(one)")
            let (_, none) = await KeepaliveEndToEndTests.sendThenWaitForClose(
                port: gw.port, "GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n")
            #expect(none.hasPrefix("HTTP/1.1 200 OK"), "\(none)")
        }
    }

    /// A transfer coding besides chunked is refused `415` naming `Transfer-Encoding`: NIO took
    /// the chunks and dropped the gzip, and the route answered "invalid JSON" about gzip bytes.
    @Test func aTransferCodingOtherThanChunkedIsRefused() async throws {
        try await LiveGateway.run(LiveGateway.config()) { gw in
            let (text, body) = try await Self.refusedAndClosed(
                gw,
                "PUT /v1/tables/orders/rows/o1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(LiveGateway.clientToken)\r\nTransfer-Encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
            #expect(text.hasPrefix("HTTP/1.1 415 Unsupported Media Type"), "\(text)")
            #expect(body["error"]?["field"]?.string == "Transfer-Encoding")
            let unchanged = try await gw.send(.GET, "/v1/tables/orders/rows/o1")
            #expect(unchanged.status == 404)
            // Chunked alone, in any case, is read as ever.
            let (_, chunked) = await KeepaliveEndToEndTests.sendThenWaitForClose(
                port: gw.port,
                "PUT /v1/tables/orders/rows/o1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(LiveGateway.clientToken)\r\nTransfer-Encoding: Chunked\r\nConnection: close\r\n\r\nd\r\n{\"values\":{}}\r\n0\r\n\r\n")
            #expect(chunked.hasPrefix("HTTP/1.1 200 OK"), "\(chunked)")
        }
    }

    /// The scheme of `Authorization` in any case, and any run of spaces after it, is the same
    /// header (RFC 9110 §11): `bearer <token>` was refused 401 as "missing bearer token".
    @Test(arguments: ["bearer %@", "BEARER %@", "Bearer  %@", "Bearer %@  "])
    func theBearerSchemeIsReadAsHTTPDefinesIt(_ form: String) async throws {
        try await LiveGateway.run(LiveGateway.config()) { gw in
            let header = form.replacingOccurrences(of: "%@", with: LiveGateway.clientToken)
            let reply = try await gw.send(.GET, "/v1/tables/orders/rows/o1", token: nil, headers: [("Authorization", header)])
            #expect(reply.status == 404, "\(header): \(reply.body)")
            let wrong = try await gw.send(.GET, "/v1/tables/orders/rows/o1", token: nil, headers: [("Authorization", "Basic \(LiveGateway.clientToken)")])
            #expect(wrong.status == 401)
        }
    }

    /// A body HTTP cannot frame is refused before a route sees it, told why in JSON, writes
    /// nothing, and closes the connection: a chunked body that breaks off with a bad chunk size,
    /// and one framed two ways at once (Content-Length beside Transfer-Encoding, the shape of
    /// request smuggling).
    @Test(arguments: [
        ("Transfer-Encoding: chunked\r\n\r\n5\r\n{\"val\r\nZZ\r\n", "chunk size"),
        ("Content-Length: 24\r\nTransfer-Encoding: chunked\r\n\r\n{\"values\":{\"qty\":1}}\r\n", "framing"),
    ])
    func aBodyThatIsNotValidHTTPIsABadRequest(_ framing: String, _ told: String) async throws {
        try await LiveGateway.run(LiveGateway.config()) { gw in
            let (closed, text) = await KeepaliveEndToEndTests.sendThenWaitForClose(
                port: gw.port,
                "PUT /v1/tables/orders/rows/o1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(LiveGateway.clientToken)\r\n"
                    + framing)
            #expect(closed)
            #expect(text.hasPrefix("HTTP/1.1 400 Bad Request"), "\(text)")
            #expect(text.contains(#""code":"bad_request""#) && text.contains(told), "\(text)")
            let stats = try await gw.stats()
            #expect(stats["store"]?["last_seq"]?.int == 0)
        }
    }

    /// A client that closes its side with its body short of its `Content-Length` gets a JSON
    /// answer on the half still open: the refusal decided before the body was read (a wrong
    /// token, `401`), or `400 bad_request` naming the short body; nothing is written.
    @Test func aBodyCutShortByItsClientIsAnsweredInJSON() async throws {
        try await LiveGateway.run(LiveGateway.config()) { gw in
            let short = "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"values\":{\"customer\":\"Ada\""
            let refused = await KeepaliveEndToEndTests.sendThenWaitForClose(
                port: gw.port,
                "PUT /v1/tables/orders/rows/o1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer not-a-token-0123456789\r\n" + short,
                halfClose: true)
            #expect(refused.closed)
            #expect(refused.received.hasPrefix("HTTP/1.1 401 Unauthorized"), "\(refused.received)")
            #expect(refused.received.contains(#""code":"unauthorized""#), "\(refused.received)")

            let cut = await KeepaliveEndToEndTests.sendThenWaitForClose(
                port: gw.port,
                "PUT /v1/tables/orders/rows/o1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(LiveGateway.clientToken)\r\n"
                    + short,
                halfClose: true)
            #expect(cut.closed)
            #expect(cut.received.hasPrefix("HTTP/1.1 400 Bad Request"), "\(cut.received)")
            #expect(cut.received.contains(#""code":"bad_request""#) && cut.received.contains("input ended before the body"), "\(cut.received)")
            let stats = try await gw.stats()
            #expect(stats["store"]?["last_seq"]?.int == 0)
        }
    }

    /// HTTP/1.0 without `Connection: keep-alive` ends the connection after the answer, as an
    /// HTTP/1.0 client that reads to the end expects, and with it is told the connection stays;
    /// HEAD answers wherever GET does.
    @Test func anHTTP10RequestIsAnsweredThenClosedAndHEADWorksWhereGETDoes() async throws {
        try await LiveGateway.run(LiveGateway.config()) { gw in
            let (closed, text) = await KeepaliveEndToEndTests.sendThenWaitForClose(port: gw.port, "GET /healthz HTTP/1.0\r\n\r\n")
            #expect(closed)
            #expect(text.hasPrefix("HTTP/1.1 200 OK") && text.hasSuffix(#"{"status":"ok"}"#), "\(text)")

            // Asked to keep the connection, the answer says so, and a second request is answered on it.
            let kept = await KeepaliveEndToEndTests.twoHTTP10KeepAliveRequests(port: gw.port)
            #expect(kept.first.hasPrefix("HTTP/1.1 200 OK"), "\(kept.first)")
            #expect(kept.first.lowercased().contains("connection: keep-alive"), "\(kept.first)")
            #expect(kept.second.hasPrefix("HTTP/1.1 200 OK") && kept.second.hasSuffix(#"{"status":"ok"}"#), "\(kept.second)")

            #expect(try await gw.send(.PUT, "/v1/tables/orders/rows/o1", body: #"{"values":{"customer":"Ada"}}"#).status == 200)
            let head = try await gw.send(.HEAD, "/v1/tables/orders/rows/o1")
            #expect(head.status == 200)
            #expect(head.headers["ETag"].first == "\"1\"")
            #expect(head.body.isEmpty)
            #expect(try await gw.send(.HEAD, "/v1/tables/orders/rows/missing").status == 404)
        }
    }

    /// A request answered before the garbage that follows it on the same connection keeps its
    /// answer; the garbage closes the connection.
    @Test func aGoodRequestBeforeGarbageIsAnsweredAsUsual() async throws {
        try await LiveGateway.run(LiveGateway.config()) { gw in
            let answer = await ExpectContinueEndToEndTests.exchange(
                port: gw.port, head: "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nFOO / HTTP/1.1\r\nHost: x\r\n\r\n", body: "")
            let text = answer.beforeBody + answer.afterBody
            #expect(text.hasPrefix("HTTP/1.1 200 OK"), "\(text)")
            #expect(text.contains(#"{"status":"ok"}"#))
            #expect(text.components(separatedBy: "HTTP/1.1 ").count <= 3, "\(text)")
        }
    }

    @Test func typeErrorsNameTheColumnAndTheExpectedType() async throws {
        try await LiveGateway.run(LiveGateway.config()) { gw in
            let reply = try await gw.send(.PUT, "/v1/tables/orders/rows/o1", body: #"{"values":{"total":"12"}}"#)
            #expect(reply.json["error"]?["field"] == "total")
            #expect(reply.json["error"]?["message"]?.string?.contains("REAL") == true)
        }
    }
}
