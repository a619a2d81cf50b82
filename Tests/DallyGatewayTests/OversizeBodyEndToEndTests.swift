import NIOHTTP1
import Testing

/// Bodies past `limits.max_body_bytes` (2,048 bytes in these tests), sent by a client that
/// writes everything before it reads: it gets its answer, never a hang or a reset, and the
/// gateway keeps serving.
@Suite("End to end: oversize bodies")
struct OversizeBodyEndToEndTests {
    @Test func aBodyOverTheLimitIsAnswered413NamingTheLimitInWordsAndBytes() async throws {
        // A few megabytes: past the limit and past what the sockets buffer.
        try await LiveGateway.run(try LiveGateway.config()) { gateway in
            let outcome = await EagerWriterClient.send(
                port: gateway.port, method: "PUT", path: "/v1/tables/orders/rows/o1", token: LiveGateway.clientToken,
                bodyBytes: 5 << 20)
            guard case .answered(let status, let body) = outcome else {
                Issue.record("expected an answer, got \(outcome)")
                return
            }
            #expect(status == 413)
            #expect(body.contains("body_too_large") && body.contains("2 KiB (2048 bytes)"))
            #expect(!body.contains("NIO"))
        }
    }

    /// A `Content-Length` over the limit is answered before the body: a client that announces
    /// one and waits (here, sends nothing) gets its 413, not the 60 s `body_timeout`.
    @Test(arguments: ["/v1/tables/orders/rows/o1", "/v1/tables/orders/batch"])
    func anAnnouncedLengthOverTheLimitIsAnsweredBeforeTheBody(path: String) async throws {
        try await LiveGateway.run(try LiveGateway.config()) { gateway in
            let outcome = await EagerWriterClient.send(
                port: gateway.port, method: path.hasSuffix("batch") ? "POST" : "PUT", path: path,
                token: LiveGateway.clientToken, bodyBytes: 99_999_999_999, sentBytes: 0)
            guard case .answered(let status, let body) = outcome else {
                Issue.record("expected an answer before the body, got \(outcome)")
                return
            }
            #expect(status == 413)
            #expect(body.contains("body_too_large"))
            let reply = try await gateway.send(.GET, "/v1/tables/orders/rows")
            #expect(reply.status == 200)
        }
    }

    @Test(arguments: [
        ("PUT", "/v1/tables/orders/rows/o1", "wrong-token-0123456789", 401),
        ("PUT", "/v2/nothing", LiveGateway.clientToken, 404),
        ("POST", "/v1/tables/orders/batch", LiveGateway.clientToken, 413),
    ])
    func anEarlyAnswerReachesAClientThatWritesFirst(method: String, path: String, token: String, status: Int)
        async throws
    {
        try await LiveGateway.run(try LiveGateway.config()) { gateway in
            // More than the sockets buffer (a client refused early used to hang here), within
            // what the gateway drains after answering: the client finishes writing and reads
            // the answer.
            let outcome = await EagerWriterClient.send(
                port: gateway.port, method: method, path: path, token: token, bodyBytes: 6 << 20)
            guard case .answered(let got, _) = outcome else {
                Issue.record("expected \(status), got \(outcome)")
                return
            }
            #expect(got == status)
        }
    }

    /// Far past what is drained before the answer: the answer goes first, and the body is read
    /// on behind it, so that a client which writes all of it first still reads its answer.
    @Test func farPastTheLimitTheAnswerStillComesAndTheGatewayServesOn() async throws {
        try await LiveGateway.run(try LiveGateway.config()) { gateway in
            for (token, status) in [("wrong-token-0123456789", 401), (LiveGateway.clientToken, 413)] {
                let outcome = await EagerWriterClient.send(
                    port: gateway.port, method: "PUT", path: "/v1/tables/orders/rows/o1", token: token,
                    bodyBytes: 40 << 20)
                guard case .answered(let got, let body) = outcome else {
                    Issue.record("expected \(status), got \(outcome)")
                    continue
                }
                #expect(got == status)
                #expect(body.contains(#""error":{"code":"#))
            }
            let reply = try await gateway.send(.PUT, "/v1/tables/orders/rows/o1", body: #"{"values":{"customer":"Ada"}}"#)
            #expect(reply.status == 200)
        }
    }
}
