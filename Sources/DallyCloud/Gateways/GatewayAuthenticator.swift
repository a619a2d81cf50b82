import DallyConfig
import DallyCore
import Foundation
import DallyHTTP
import Hummingbird

/// Checks who a gateway is, on every request: `Authorization: Basic base64(<gateway id>:<secret>)`
/// as configured in `[[gateways]]`, and, when the cloud asks for client certificates
/// (`tls_client_ca`), the certificate's common name.
///
/// With client certificates a gateway proves its id twice when it has a secret (the
/// certificate must name the same gateway as the credentials), or by the certificate alone
/// when its `[[gateways]]` entry has no secret.
struct GatewayAuthenticator: Sendable {
    /// Per gateway id, its secret; nil for a gateway known by its certificate alone.
    private let secrets: [String: [UInt8]?]
    private let adminToken: [UInt8]
    /// Whether connections carry a client certificate checked against `tls_client_ca`.
    private let certificates: Bool

    init(gateways: [GatewayCredential], adminToken: String, certificates: Bool = false) {
        secrets = Dictionary(uniqueKeysWithValues: gateways.map { ($0.id, $0.secret.map { Array($0.utf8) }) })
        self.adminToken = Array(adminToken.utf8)
        self.certificates = certificates
    }

    /// The id of the gateway behind `request`.
    ///
    /// - Throws: `unauthorized` for a missing or malformed header, an unknown gateway, a wrong
    ///   secret, or a certificate that names another gateway; the message does not say which
    ///   secret was wrong, so a prober learns nothing.
    func gateway(of request: Request, context: DallyRequestContext) async throws(DallyError) -> String {
        let named = certificates ? await PeerCertificate.commonName(on: context.channel) : nil
        guard let header = request.headers[.authorization] else {
            // The certificate alone, for a gateway configured without a secret.
            if let named, case .some(nil) = secrets[named] { return named }
            throw DallyError(.unauthorized, "send 'Authorization: Basic base64(<gateway id>:<secret>)'")
        }
        guard let encoded = AuthorizationHeader.credentials(header, scheme: "Basic"),
            let decoded = Data(base64Encoded: String(encoded)),
            let colon = decoded.firstIndex(of: UInt8(ascii: ":"))
        else {
            throw DallyError(.unauthorized, "send 'Authorization: Basic base64(<gateway id>:<secret>)'")
        }
        let id = String(decoding: decoded[decoded.startIndex..<colon], as: UTF8.self)
        let secret = Array(decoded[decoded.index(after: colon)...])
        guard case .some(.some(let expected)) = secrets[id], Self.constantTimeEqual(expected, secret) else {
            throw DallyError(.unauthorized, "unknown gateway or wrong secret")
        }
        if certificates, named != id {
            throw DallyError(
                .unauthorized, "the client certificate names \(named.map { "gateway '\($0)'" } ?? "no gateway"), not '\(id)'")
        }
        return id
    }

    /// Requires the admin bearer token (for `/stats` and `/metrics`).
    func requireAdmin(_ request: Request) throws(DallyError) {
        guard let header = request.headers[.authorization],
            let token = AuthorizationHeader.credentials(header, scheme: "Bearer")
        else {
            throw DallyError(.unauthorized, "this endpoint needs the admin token: 'Authorization: Bearer <token>'")
        }
        guard Self.constantTimeEqual(Array(token.utf8), adminToken) else {
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
