import Foundation

/// A private CA and certificates it signed, made with the real `openssl` command in a
/// temporary directory: a server certificate for 127.0.0.1 (twice, as a renewal would give)
/// and a client certificate for gateway `gw-a`.
public struct TestCertificates: Sendable {
    /// An openssl step that did not do its job, with what it printed.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    public let directory: String
    public var ca: String { directory + "/ca.pem" }
    public var serverCertificate: String { directory + "/server.pem" }
    public var serverKey: String { directory + "/server.key" }
    public var clientCertificate: String { directory + "/client.pem" }
    public var clientKey: String { directory + "/client.key" }

    public static var opensslAvailable: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl") }

    public init() throws {
        directory = ScratchSpace.path("dally-tls-")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Self.openssl(in: directory, [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
            "-keyout", "ca.key", "-out", "ca.pem", "-subj", "/CN=Dally Test CA",
        ])
        try issue("server", commonName: "dally-server-1", extensions: "subjectAltName=IP:127.0.0.1,DNS:localhost")
        try issue("client", commonName: "gw-a", extensions: "extendedKeyUsage=clientAuth")
    }

    /// Issues `<name>.pem` and `<name>.key` for `commonName`, signed by the CA (again: a renewal).
    public func issue(_ name: String, commonName: String, extensions: String) throws {
        try extensions.write(toFile: directory + "/\(name).ext", atomically: true, encoding: .utf8)
        try Self.openssl(in: directory, [
            "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "\(name).key",
            "-out", "\(name).csr", "-subj", "/CN=\(commonName)",
        ])
        try Self.openssl(in: directory, [
            "x509", "-req", "-in", "\(name).csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
            "-out", "\(name).pem", "-extfile", "\(name).ext",
        ])
    }

    /// The subject of the certificate a TLS server on `port` presents now (`openssl s_client`).
    public func presentedSubject(port: Int) throws -> String {
        let chain = try Self.openssl(
            in: directory, ["s_client", "-connect", "127.0.0.1:\(port)", "-CAfile", ca, "-showcerts"], input: "")
        let pem = chain.components(separatedBy: "-----BEGIN CERTIFICATE-----").dropFirst().first
            .map { "-----BEGIN CERTIFICATE-----" + $0.components(separatedBy: "-----END CERTIFICATE-----")[0] + "-----END CERTIFICATE-----\n" }
        guard let pem else { throw Failure("no certificate from 127.0.0.1:\(port):\n\(chain)") }
        return try Self.openssl(in: directory, ["x509", "-noout", "-subject"], input: pem)
    }

    @discardableResult
    public static func openssl(in directory: String, _ arguments: [String], input: String? = nil) throws -> String {
        // In `directory`, through the shell: a child started without Foundation's Process
        // (``SpawnedProcess``) cannot be given a working directory.
        let quoted = ([directory, "/usr/bin/openssl"] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let command = "cd \(quoted[0]) && exec " + quoted.dropFirst().joined(separator: " ")
        let (status, text) = try SpawnedProcess.output("/bin/sh", ["-c", command], input: input ?? "")
        guard status == 0 || arguments.first == "s_client" else {
            throw Failure("openssl \(arguments.joined(separator: " ")) failed (\(status))")
        }
        return text
    }
}
