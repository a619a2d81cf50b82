import AsyncHTTPClient
import DallySync
import Foundation

extension CloudClient {
    /// `GET /v1/tables`: the tables the cloud declares (PROTOCOL.md §7.5), or nil from a
    /// cloud that predates the route (its `404`); the bytes it took, and the node asked (each
    /// node of a cloud reads its own configuration).
    func declarations() async throws(CloudError) -> (CloudDeclarations?, Traffic, node: String) {
        let node = baseURL
        var request = HTTPClientRequest(url: node + "/v1/tables")
        request.method = .GET
        let (response, bytes, received) = try await send(request, timeout: link.requestTimeout, maxAnswer: maxAnswerBytes)
        let traffic = Traffic(received: received)
        if response.status == .notFound { return (nil, traffic, node) }
        // Any other refusal, with the cloud's code.
        if !(200..<300).contains(response.status.code) { _ = try Self.json(bytes, status: response.status) }
        do {
            return (try JSONDecoder().decode(CloudDeclarations.self, from: Data(bytes)), traffic, node)
        } catch {
            throw .badAnswer("GET /v1/tables: not a list of tables: \(error)")
        }
    }
}
