import AsyncHTTPClient
import DallyCore
import NIOCore
import NIOHTTP1

/// The requests the latency benches send to gateways and clouds: one call, its status, the
/// start of its text, and its JSON.
struct BenchHTTP: Sendable {
    let client: HTTPClient

    struct Reply: Sendable {
        var status: Int
        var text: String
        var json: JSONValue
    }

    /// `method url` with `Authorization: Bearer token`, and `body` as JSON when given.
    func call(
        _ method: HTTPMethod, _ url: String, body: [UInt8]? = nil, token: String = BenchConfigs.clientToken
    ) async throws -> Reply {
        var request = HTTPClientRequest(url: url)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await client.execute(request, timeout: .seconds(300))
        let bytes = try await response.body.collect(upTo: 64 << 20)
        let text = String(buffer: bytes)
        return Reply(
            status: Int(response.status.code), text: String(text.prefix(500)),
            json: (try? JSONParser.parse(text)) ?? .null)
    }

    /// `{"values":{…}}` of order `i`, as the sync benches write it.
    static func order(_ i: Int) -> [UInt8] {
        Array(
            """
            {"values":{"customer":"customer-\(i)","total":\(Double(i % 10_000) / 100 + 1),"paid":\(i % 2 == 0),\
            "items":[{"sku":"SKU-\(1000 + i % 9000)","qty":\(1 + i % 5),"price":9.95}]}}
            """.utf8)
    }
}
