import DallyCore
import Testing

/// A web page of an allowed origin calls the local API from a browser: the preflight, then the
/// request, errors included; other origins get no CORS header, and without `cors_origins`
/// nothing changes.
@Suite("End to end: CORS")
struct CORSEndToEndTests {
    static let origin = "https://pos.example"

    @Test func anAllowedOriginsPageMayCallTheAPI() async throws {
        var config = try LiveGateway.config()
        config.server.corsOrigins = [Self.origin]
        try await LiveGateway.run(config) { gw in
            // The browser's preflight: no token, before the PUT.
            let preflight = try await gw.send(
                .OPTIONS, "/v1/tables/orders/rows/o1", token: nil,
                headers: [("Origin", Self.origin), ("Access-Control-Request-Method", "PUT"),
                          ("Access-Control-Request-Headers", "authorization, content-type, if-match")])
            #expect(preflight.status == 204, "\(preflight.body)")
            #expect(preflight.headers["Access-Control-Allow-Origin"].first == Self.origin)
            #expect(preflight.headers["Access-Control-Allow-Methods"].first?.contains("PUT") == true)
            let allowedHeaders = preflight.headers["Access-Control-Allow-Headers"].first?.lowercased() ?? ""
            #expect(["authorization", "content-type", "if-match"].allSatisfy(allowedHeaders.contains))
            #expect(preflight.headers["Vary"].contains("Origin"))
            #expect(preflight.headers["Access-Control-Allow-Private-Network"].isEmpty)
            // A page from the internet reaching the LAN's gateway: Chrome asks first.
            let privateNetwork = try await gw.send(
                .OPTIONS, "/v1/tables/orders/rows/o1", token: nil,
                headers: [("Origin", Self.origin), ("Access-Control-Request-Method", "GET"),
                          ("Access-Control-Request-Private-Network", "true")])
            #expect(privateNetwork.headers["Access-Control-Allow-Private-Network"].first == "true")

            let put = try await gw.send(.PUT, "/v1/tables/orders/rows/o1", body: #"{"values":{"total":1}}"#, headers: [("Origin", Self.origin)])
            #expect(put.status == 200)
            #expect(put.headers["Access-Control-Allow-Origin"].first == Self.origin)
            #expect(put.headers["Access-Control-Expose-Headers"].first?.contains("ETag") == true)
            // An error is readable by the page too.
            let missing = try await gw.send(.GET, "/v1/tables/orders/rows/none", headers: [("Origin", Self.origin)])
            #expect(missing.status == 404)
            #expect(missing.headers["Access-Control-Allow-Origin"].first == Self.origin)

            // Another origin: no CORS header, and its preflight finds no OPTIONS route.
            let other = try await gw.send(.GET, "/v1/tables/orders/rows/o1", headers: [("Origin", "https://evil.example")])
            #expect(other.status == 200)
            #expect(other.headers["Access-Control-Allow-Origin"].isEmpty)
            let otherPreflight = try await gw.send(
                .OPTIONS, "/v1/tables/orders/rows/o1", token: nil,
                headers: [("Origin", "https://evil.example"), ("Access-Control-Request-Method", "PUT")])
            #expect(otherPreflight.status == 405)
            #expect(otherPreflight.headers["Access-Control-Allow-Origin"].isEmpty)
        }
    }

    @Test func anyOriginIsAnsweredWithAStar() async throws {
        var config = try LiveGateway.config()
        config.server.corsOrigins = ["*"]
        try await LiveGateway.run(config) { gw in
            let reply = try await gw.send(.GET, "/v1/tables/orders/rows", headers: [("Origin", "http://10.0.0.7:3000")])
            #expect(reply.headers["Access-Control-Allow-Origin"].first == "*")
            #expect(!reply.headers["Vary"].contains("Origin"))
        }
    }

    @Test func withoutCORSOriginsNothingChanges() async throws {
        try await LiveGateway.run(try LiveGateway.config()) { gw in
            let reply = try await gw.send(.GET, "/v1/tables/orders/rows", headers: [("Origin", Self.origin)])
            #expect(reply.status == 200)
            #expect(reply.headers["Access-Control-Allow-Origin"].isEmpty)
            let preflight = try await gw.send(
                .OPTIONS, "/v1/tables/orders/rows/o1", token: nil,
                headers: [("Origin", Self.origin), ("Access-Control-Request-Method", "PUT")])
            #expect(preflight.status == 405)
        }
    }
}
