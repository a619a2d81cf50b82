import AsyncHTTPClient
import DallyConfig
import DallyCore
import DallyTestSupport
import Foundation
import NIOCore
import NIOSSL
import Testing

/// TLS on both servers with a private CA made in the test by openssl: the gateway checks the
/// cloud's certificate against `[cloud] ca`, the cloud may ask gateways for certificates, and
/// a server's certificate is reloaded on SIGHUP.
@Suite(.enabled(if: TestCertificates.opensslAvailable)) struct TLSEndToEndTests {
    static let clientToken = "tls-client-token-0123456789"

    func system() -> SystemConfig {
        SystemConfig(
            tables: [.init("orders", columns: ["customer TEXT"])],
            gateways: [.init(id: "gw-a", secret: "gw-a-secret-0123456789"), .init(id: "gw-b", secret: "gw-b-secret-0123456789")],
            clients: [.init(name: "app", token: Self.clientToken)], cloudAdminToken: "tls-admin-0123456789",
            gatewayAdminToken: "tls-admin-0123456789", logLevel: "info")
    }

    /// Starts a cloud over TLS (asking for client certificates when `askClients`) and gateway
    /// `gw-a` linked to it by `https` with `link` applied; writes a row and asks for a sync:
    /// the answer's `status` and body.
    func syncOverTLS(
        _ certificates: TestCertificates, askClients: Bool = false, cloud adjustCloud: (inout CloudConfig) -> Void = { _ in },
        gateway id: String = "gw-a", link adjust: (inout CloudLink) -> Void
    ) async throws -> (status: Int, body: String) {
        let live = LiveSystem(config: system())
        var cloud = try live.config.cloud(dataDirectory: live.directory("cloud"))
        cloud.server.tls = CertificateFiles(certificate: certificates.serverCertificate, key: certificates.serverKey)
        if askClients { cloud.server.tlsClientCA = certificates.ca }
        adjustCloud(&cloud)
        try await live.startCloud(cloud)
        var gateway = try live.config.gateway(
            id, dataDirectory: live.directory("gw-a"),
            link: .init(url: "https://127.0.0.1:\(live.cloudPort)", notifyNetworks: []))
        if var link = gateway.cloud {
            adjust(&link)
            gateway.cloud = link
        }
        try await live.startGateway("gw-a", gateway)
        defer { Task { try? await live.shutdown() } }
        let base = "http://127.0.0.1:\(live.port(of: "gw-a"))"
        var put = HTTPClientRequest(url: base + "/v1/tables/orders/rows/o1")
        put.method = .PUT
        put.headers.add(name: "Authorization", value: "Bearer \(Self.clientToken)")
        put.body = .bytes(ByteBuffer(string: #"{"values":{"customer":"Ada"}}"#))
        _ = try await HTTPClient.shared.execute(put, timeout: .seconds(10)).body.collect(upTo: 1 << 16)
        var sync = HTTPClientRequest(url: base + "/v1/tables/orders/sync")
        sync.method = .POST
        sync.headers.add(name: "Authorization", value: "Bearer \(Self.clientToken)")
        let response = try await HTTPClient.shared.execute(sync, timeout: .seconds(30))
        let body = String(buffer: try await response.body.collect(upTo: 1 << 16))
        try await live.shutdown()
        return (Int(response.status.code), body)
    }

    @Test func aGatewaySyncsWithACloudWhoseCertificateItsPrivateCASigned() async throws {
        let certificates = try TestCertificates()
        let answer = try await syncOverTLS(certificates) { $0.certificateAuthority = certificates.ca }
        #expect(answer.status == 200 && answer.body.contains(#""accepted":1"#))
    }

    @Test func withoutTheCATheGatewayRefusesTheCloudsCertificate() async throws {
        let certificates = try TestCertificates()
        let answer = try await syncOverTLS(certificates) { _ in }
        #expect(answer.status == 202 && answer.body.contains("queued"))
    }

    @Test func aCloudThatAsksForCertificatesTakesOnlyGatewaysPresentingOne() async throws {
        let certificates = try TestCertificates()
        let without = try await syncOverTLS(certificates, askClients: true) { $0.certificateAuthority = certificates.ca }
        #expect(without.status == 202)
        let with = try await syncOverTLS(certificates, askClients: true) { link in
            link.certificateAuthority = certificates.ca
            link.clientCertificate = CertificateFiles(certificate: certificates.clientCertificate, key: certificates.clientKey)
        }
        #expect(with.status == 200 && with.body.contains(#""accepted":1"#), "\(with.body)")
    }

    @Test func aGatewayKnownByItsCertificateAloneNeedsNoSecret() async throws {
        let certificates = try TestCertificates()
        let answer = try await syncOverTLS(
            certificates, askClients: true, cloud: { $0.gateways[0].secret = nil },
            link: { link in
                link.secret = nil
                link.certificateAuthority = certificates.ca
                link.clientCertificate = CertificateFiles(certificate: certificates.clientCertificate, key: certificates.clientKey)
            })
        #expect(answer.status == 200 && answer.body.contains(#""accepted":1"#), "\(answer.body)")
    }

    @Test func aCertificateNamingAnotherGatewayIsRefused() async throws {
        let certificates = try TestCertificates()
        // gw-b's id and secret, with the certificate issued to gw-a.
        let answer = try await syncOverTLS(certificates, askClients: true, gateway: "gw-b") { link in
            link.certificateAuthority = certificates.ca
            link.clientCertificate = CertificateFiles(certificate: certificates.clientCertificate, key: certificates.clientKey)
        }
        #expect(answer.status == 202 && answer.body.contains("gw-a"), "\(answer.body)")
    }

    /// `http://` to a port that speaks TLS is told so in JSON, where TLS would drop it unanswered;
    /// HTTPS on the same port serves on.
    @Test func aPlainRequestToTheTLSPortIsToldToUseHTTPS() async throws {
        let certificates = try TestCertificates()
        let live = LiveSystem(config: system())
        var cloud = try live.config.cloud(dataDirectory: live.directory("cloud"))
        cloud.server.tls = CertificateFiles(certificate: certificates.serverCertificate, key: certificates.serverKey)
        try await live.startCloud(cloud)
        do {
            let plain = try await HTTPClient.shared.execute(
                HTTPClientRequest(url: "http://127.0.0.1:\(live.cloudPort)/healthz"), timeout: .seconds(10))
            let body = String(buffer: try await plain.body.collect(upTo: 1 << 16))
            #expect(plain.status.code == 400)
            #expect(body.contains(#""code":"tls_required""#), "\(body)")
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .file(certificates.ca)
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
            let secure = try await client.execute(
                HTTPClientRequest(url: "https://127.0.0.1:\(live.cloudPort)/healthz"), timeout: .seconds(10))
            _ = try await secure.body.collect(upTo: 4096)
            #expect(secure.status.code == 200)
            try await client.shutdown()
        } catch {
            try? await live.shutdown()
            throw error
        }
        try await live.shutdown()
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: GatewayProcess.executable.path)))
    func sighupReloadsTheGatewaysCertificateWithoutDroppingAConnection() async throws {
        let certificates = try TestCertificates()
        let root = certificates.directory
        var toml = system().gatewayTOML("gw-a", dataDirectory: root + "/gw")
        toml = toml.replacingOccurrences(
            of: "[server]\n",
            with: "[server]\nhost = \"127.0.0.1\"\ntls_cert = \"\(certificates.serverCertificate)\"\ntls_key = \"\(certificates.serverKey)\"\n")
        try toml.write(toFile: root + "/gateway.toml", atomically: true, encoding: .utf8)
        let gateway = try await offPool { try GatewayProcess(config: root + "/gateway.toml") }
        #expect(try certificates.presentedSubject(port: gateway.port).contains("dally-server-1"))

        // A client connected before the reload, over HTTPS with the private CA.
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(certificates.ca)
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 1
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        func healthz() async throws -> Int {
            let response = try await client.execute(
                HTTPClientRequest(url: "https://127.0.0.1:\(gateway.port)/healthz"), timeout: .seconds(10))
            _ = try await response.body.collect(upTo: 4096)
            return Int(response.status.code)
        }
        #expect(try await healthz() == 200)

        try certificates.issue("server", commonName: "dally-server-2", extensions: "subjectAltName=IP:127.0.0.1")
        kill(gateway.process.processIdentifier, SIGHUP)
        var subject = ""
        for _ in 0..<500 {
            subject = try certificates.presentedSubject(port: gateway.port)
            if subject.contains("dally-server-2") || gateway.log.contains("cannot reload") { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(subject.contains("dally-server-2"))
        #expect(try await healthz() == 200)
        try await client.shutdown()
        #expect(gateway.terminate() == 0)
        #expect(gateway.log.contains("reloaded the TLS certificate"))
    }
}
