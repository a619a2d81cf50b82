import AsyncHTTPClient
import DallySync
import Foundation

extension CloudClient {
    /// `POST /v1/tables` with `told`, the gateway's own declarations, which the cloud keeps
    /// for its `/stats`: the tables the cloud declares (PROTOCOL.md §7.5), or nil from a cloud
    /// that predates the route (its `404`); the bytes it took, and the node asked (each node of
    /// a cloud reads its own configuration). A cloud that lists its tables but takes no
    /// declarations (its `405`) is asked with `GET`.
    func declarations(told: TableDeclarations) async throws(CloudError) -> (TableDeclarations?, Traffic, node: String) {
        let node = baseURL
        var request = HTTPClientRequest(url: node + "/v1/tables")
        request.method = .POST
        let document: [UInt8]
        do {
            document = try told.encoded()
        } catch {
            throw .badAnswer("the gateway's declarations do not encode: \(error)")
        }
        let body = jsonBody(document, on: &request)
        var traffic = Traffic(sentRaw: document.count)
        traffic.sentCompressed = body.count
        var (response, bytes, received) = try await send(request, body: body, timeout: link.requestTimeout, maxAnswer: maxAnswerBytes)
        if response.status == .methodNotAllowed {
            var plain = HTTPClientRequest(url: node + "/v1/tables")
            plain.method = .GET
            let first = received
            (response, bytes, received) = try await send(plain, timeout: link.requestTimeout, maxAnswer: maxAnswerBytes)
            received += first
        }
        traffic.received = received
        if response.status == .notFound { return (nil, traffic, node) }
        // Any other refusal, with the cloud's code.
        if !(200..<300).contains(response.status.code) { _ = try Self.json(bytes, status: response.status) }
        do {
            return (try TableDeclarations(document: bytes), traffic, node)
        } catch {
            throw .badAnswer("POST /v1/tables: not a list of tables: \(error)")
        }
    }
}
