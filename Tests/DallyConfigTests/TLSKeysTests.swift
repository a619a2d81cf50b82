import DallyTestSupport
import Foundation
import Testing

@testable import DallyConfig

/// `[server] tls_*` and `[cloud] ca`/`client_*`: paths checked when the file is read.
@Suite("TLS keys")
struct TLSKeysTests {
    let directory: String
    var certificate: String { directory + "/cert.pem" }
    var key: String { directory + "/key.pem" }

    init() throws {
        directory = ScratchSpace.path("dally-tls-keys-")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try "pem".write(toFile: certificate, atomically: true, encoding: .utf8)
        try "pem".write(toFile: key, atomically: true, encoding: .utf8)
    }

    func gateway(server: String = "", cloud: String = "") -> String {
        """
        [server]
        \(server)
        [admin]
        token = "admin-token-0123456789"
        \(cloud.isEmpty ? "" : """
        [cloud]
        url = "https://127.0.0.1:8090"
        gateway_id = "gw-a"
        secret = "secret-0123456789abc"
        \(cloud)
        """)
        [[tables]]
        name = "orders"
        columns = ["customer TEXT"]
        """
    }

    func refusal(_ text: String) -> String? {
        do {
            _ = try GatewayConfig.parse(text: text, file: "gateway.toml")
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test func aCertificateAndItsKeyAreRead() throws {
        let config = try GatewayConfig.parse(
            text: gateway(server: "tls_cert = \"\(certificate)\"\ntls_key = \"\(key)\"", cloud: "ca = \"\(certificate)\""),
            file: "gateway.toml")
        #expect(config.server.tls == CertificateFiles(certificate: certificate, key: key))
        #expect(config.cloud?.certificateAuthority == certificate)
        #expect(config.cloud?.insecureSkipVerify == false)
    }

    @Test func oneWithoutTheOtherIsRefused() {
        #expect(refusal(gateway(server: "tls_cert = \"\(certificate)\""))?.contains("server.tls_key") == true)
        #expect(refusal(gateway(cloud: "client_key = \"\(key)\""))?.contains("cloud.client_cert") == true)
    }

    @Test func aFileThatCannotBeReadIsNamed() {
        let text = gateway(server: "tls_cert = \"\(directory)/nope.pem\"\ntls_key = \"\(key)\"")
        #expect(refusal(text)?.contains("cannot read the file \(directory)/nope.pem") == true)
    }

    @Test func aGatewayWithoutASecretMustPresentACertificate() throws {
        let noSecret = gateway(cloud: "").replacingOccurrences(of: "[[tables]]", with: """
            [cloud]
            url = "https://127.0.0.1:8090"
            gateway_id = "gw-a"
            [[tables]]
            """)
        #expect(refusal(noSecret)?.contains("cloud.secret") == true)
        let byCertificate = noSecret.replacingOccurrences(
            of: "gateway_id = \"gw-a\"", with: "gateway_id = \"gw-a\"\nclient_cert = \"\(certificate)\"\nclient_key = \"\(key)\"")
        let config = try GatewayConfig.parse(text: byCertificate, file: "gateway.toml")
        #expect(config.cloud?.secret == nil && config.cloud?.clientCertificate != nil)
    }

    @Test func clientCertificatesNeedTLS() {
        #expect(refusal(gateway(server: "tls_client_ca = \"\(certificate)\""))?.contains("needs tls_cert") == true)
    }
}
