/// A certificate chain and its private key, as PEM file paths: a server's (`tls_cert`,
/// `tls_key`) or a gateway's client certificate for the cloud (`client_cert`, `client_key`).
public struct CertificateFiles: Sendable, Equatable {
    public var certificate: String
    public var key: String

    public init(certificate: String, key: String) {
        self.certificate = certificate
        self.key = key
    }
}
