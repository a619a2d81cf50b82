import AsyncHTTPClient
import DallyCore
import DallyFrugal
import DallyObjects
import NIOCore

/// Whether the cloud holds an object whole: `GET /v1/objects/{hash}` straight to the cloud's
/// port (not through a relay, so the check costs the strategies nothing).
struct FrugalObjectCheck {
    let http: HTTPClient
    let cloudPort: Int
    let gateway: String

    func cloudHolds(_ hash: ContentHash) async throws -> Bool {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(cloudPort)/v1/objects/\(hash.hex)")
        request.method = .GET
        request.headers.add(name: "Authorization", value: FrugalSetup.basicAuthorization(gateway))
        let response = try await http.execute(request, timeout: .seconds(60))
        _ = try await response.body.collect(upTo: 64 << 20)
        return response.status == .ok
    }

    /// How many of the trace's final objects the cloud does not hold whole.
    func missing(_ trace: FrugalTrace, hashes: FrugalObjectHashes) async throws -> Int {
        var missing = 0
        for object in trace.finalObjects() where !(try await cloudHolds(try hashes.hash(object))) { missing += 1 }
        return missing
    }
}
