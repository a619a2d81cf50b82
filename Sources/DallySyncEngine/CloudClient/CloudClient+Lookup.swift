import AsyncHTTPClient
import DallyCore

/// Looking something up in the cloud that may not be there.
extension CloudClient {
    /// `GET path`: its JSON answer and the bytes it took on the wire, or nil on `404`.
    func lookUp(_ path: String) async throws(CloudError) -> (JSONValue, Int)? {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = .GET
        do {
            return try await exchange(request, timeout: link.requestTimeout)
        } catch .refused(404, _, _) {
            return nil
        }
    }
}
