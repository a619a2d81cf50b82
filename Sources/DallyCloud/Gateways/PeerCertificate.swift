import NIOCore
import NIOSSL
import X509

/// The gateway a TLS connection's client certificate names: its subject's common name. The
/// handshake checked the certificate against `tls_client_ca` already; this only reads it.
enum PeerCertificate {
    /// The common name of the certificate the client presented on `channel`; nil without TLS,
    /// without a client certificate, or without a common name.
    static func commonName(on channel: any Channel) async -> String? {
        guard
            let presented = try? await channel.pipeline.handler(type: NIOSSLServerHandler.self)
                .flatMapThrowing({ $0.peerCertificate }).get(),
            let der = try? presented.toDERBytes(),
            let certificate = try? Certificate(derEncoded: der)
        else { return nil }
        for name in certificate.subject.reversed() {
            for attribute in name where attribute.type == .RDNAttributeType.commonName {
                return attribute.value.description
            }
        }
        return nil
    }
}
