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
        Case(method: "PUT", path: "/v1/tables/orders/rows/o1", body: #"{"values":{},"expected_seq":7}"#, status: 409, code: "version_mismatch"),
        Case(method: "PUT", path: "/v1/tables/orders/rows/o1", body: #"{"values":{"customer":"\#(String(repeating: "x", count: 3000))"}}"#, status: 413, code: "body_too_large"),
        Case(method: "POST", path: "/v1/tables/orders/batch", body: #"{"deleted":[\#((0..<51).map { "\"r\($0)\"" }.joined(separator: ","))]}"#, status: 413, code: "too_many_rows"),
        Case(method: "PUT", path: "/v1/tables/orders/rows/o1", body: #"{"values":{"colour":"red"}}"#, status: 422, code: "unknown_column"),
        Case(method: "PUT", path: "/v1/tables/orders/rows/o1", body: #"{"values":{"qty":1.5}}"#, status: 422, code: "wrong_type"),
        Case(method: "PUT", path: "/v1/tables/orders/rows/o1", body: #"{"values":{"paid":"yes"}}"#, status: 422, code: "wrong_type"),
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

    @Test func typeErrorsNameTheColumnAndTheExpectedType() async throws {
        try await LiveGateway.run(LiveGateway.config()) { gw in
            let reply = try await gw.send(.PUT, "/v1/tables/orders/rows/o1", body: #"{"values":{"total":"12"}}"#)
            #expect(reply.json["error"]?["field"] == "total")
            #expect(reply.json["error"]?["message"]?.string?.contains("REAL") == true)
        }
    }
}
