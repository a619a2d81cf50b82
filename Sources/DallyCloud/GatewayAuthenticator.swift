import DallyConfig
import DallyCore
import Foundation
import Hummingbird

/// Checks the credentials a gateway sends with every request:
/// `Authorization: Basic base64(<gateway id>:<secret>)`, as configured in `[[gateways]]`.
struct GatewayAuthenticator: Sendable {
    private let secrets: [String: [UInt8]]
    private let adminToken: [UInt8]

    init(gateways: [GatewayCredential], adminToken: String) {
        secrets = Dictionary(uniqueKeysWithValues: gateways.map { ($0.id, Array($0.secret.utf8)) })
        self.adminToken = Array(adminToken.utf8)
    }

    /// The id of the gateway behind `request`.
    ///
    /// - Throws: `unauthorized` for a missing or malformed header, an unknown gateway or a wrong
    ///   secret; the message does not say which, so a prober learns nothing.
    func gateway(of request: Request) throws(DallyError) -> String {
        guard let header = request.headers[.authorization], header.hasPrefix("Basic "),
            let decoded = Data(base64Encoded: String(header.dropFirst("Basic ".count))),
            let colon = decoded.firstIndex(of: UInt8(ascii: ":"))
        else {
            throw DallyError(.unauthorized, "send 'Authorization: Basic base64(<gateway id>:<secret>)'")
        }
        let id = String(decoding: decoded[decoded.startIndex..<colon], as: UTF8.self)
        let secret = Array(decoded[decoded.index(after: colon)...])
        guard let expected = secrets[id], Self.constantTimeEqual(expected, secret) else {
            throw DallyError(.unauthorized, "unknown gateway or wrong secret")
        }
        return id
    }

    /// Requires the admin bearer token (for `/stats` and `/metrics`).
    func requireAdmin(_ request: Request) throws(DallyError) {
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer ") else {
            throw DallyError(.unauthorized, "this endpoint needs the admin token: 'Authorization: Bearer <token>'")
        }
        guard Self.constantTimeEqual(Array(header.dropFirst("Bearer ".count).utf8), adminToken) else {
            throw DallyError(.unauthorized, "wrong admin token")
        }
    }

    /// Compares without stopping at the first difference, so timing does not reveal how much
    /// of a secret a guess got right.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for i in a.indices { difference |= a[i] ^ b[i] }
        return difference == 0
    }
}
