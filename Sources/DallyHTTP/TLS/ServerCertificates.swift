import NIOSSL
import Synchronization

/// A server's TLS identity, reloadable: its certificate chain and key (and, for mutual TLS,
/// the CA its clients' certificates must chain to), read from PEM files into the context new
/// connections handshake with.
///
/// ``reload()`` reads the files again (``CertificateReloader`` calls it on SIGHUP): connections
/// made after it use the new certificate, connections already open keep theirs, none is dropped.
/// A reload that fails leaves the running certificate in place.
///
/// ```swift
/// let certificates = try ServerCertificates(certificate: "tls/cert.pem", key: "tls/key.pem")
/// Application(router: router, server: .dally(tls: certificates, keepaliveTimeout: .seconds(75)), …)
/// ```
public final class ServerCertificates: Sendable {
    public let certificatePath: String
    public let keyPath: String
    public let clientCAPath: String?
    private let current: Mutex<NIOSSLContext>

    /// - Throws: `NIOSSLError` (or a file error) when a file cannot be read or parsed, or the
    ///   key does not match the certificate.
    public init(certificate: String, key: String, clientCA: String? = nil) throws {
        certificatePath = certificate
        keyPath = key
        clientCAPath = clientCA
        current = Mutex(try Self.context(certificate: certificate, key: key, clientCA: clientCA))
    }

    /// The context a new connection handshakes with.
    var context: NIOSSLContext { current.withLock { $0 } }

    /// Reads the files again; on failure keeps the certificate in use and throws.
    public func reload() throws {
        let fresh = try Self.context(certificate: certificatePath, key: keyPath, clientCA: clientCAPath)
        current.withLock { $0 = fresh }
    }

    private static func context(certificate: String, key: String, clientCA: String?) throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem)))
        configuration.minimumTLSVersion = .tlsv12
        if let clientCA {
            // Clients are machines (gateways) with certificates, not hostnames.
            configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(clientCA))
            configuration.certificateVerification = .noHostnameVerification
        }
        return try NIOSSLContext(configuration: configuration)
    }
}
