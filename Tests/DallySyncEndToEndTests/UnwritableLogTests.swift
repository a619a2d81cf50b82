import DallyTestSupport
import Foundation
import NIOHTTP1
import Testing

/// A server whose standard error cannot be written — the log pipe's reader died, or the disk
/// under its log file is full (`/dev/full` here: every write fails) — loses those log lines
/// and goes on serving. With JSON logs the gateway died at its first line: Foundation's
/// `FileHandle.write(_:)` traps when a write fails.
@Suite struct UnwritableLogTests {
    static let gatewayBuilt = FileManager.default.isExecutableFile(atPath: GatewayProcess.executable.path)

    // Five minutes, and three to start: beside the whole suite on two cores a gateway took most
    // of a minute to answer its first request.
    @Test(.enabled(if: gatewayBuilt), .timeLimit(.minutes(5)), arguments: ["json", "text"])
    func aGatewayWhoseLogCannotBeWrittenKeepsServing(_ format: String) async throws {
        let root = ScratchSpace.path("dally-unwritable-log-")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let port = try FreePort.find()
        // Debug logs: a line for every request, and a cloud that is not there to log about.
        var system = SystemConfig(
            tables: [.init("notes", columns: ["body TEXT"])], gateways: [.init(id: "gw", secret: "gateway-secret-0123456789")],
            clients: [.init(name: "app", token: Self.token)], cloudAdminToken: "cloud-admin-0123456789",
            gatewayAdminToken: "admin-token-0123456789", logLevel: "debug", loopbackAnyPort: true)
        system.logFormat = format
        let config = root + "/gateway.toml"
        try system.gatewayTOML("gw", dataDirectory: root + "/data", link: .init(url: "http://127.0.0.1:\(try FreePort.find())"))
            .write(toFile: config, atomically: true, encoding: .utf8)
        let gateway = try SpawnedProcess(
            GatewayProcess.executable.path, ["gateway", "--config", config, "--port", "\(port)"], standardError: "/dev/full")
        defer {
            kill(gateway.processIdentifier, SIGKILL)
            gateway.waitUntilExit()
        }
        var health = 0
        for _ in 0..<1_800 where health != 200 && gateway.isRunning {
            health = (try? await call(port, .GET, "/healthz", nil).status) ?? 0
            if health != 200 { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(health == 200, "the gateway never answered (running: \(gateway.isRunning))")
        for n in 0..<20 {
            let write = try await call(port, .PUT, "/v1/tables/notes/rows/n\(n)", #"{"values":{"body":"x"}}"#)
            #expect(write.status == 200)
        }
        #expect(try await call(port, .GET, "/v1/tables/notes/rows/n19", nil).status == 200)
        #expect(gateway.isRunning)
    }

    static let token = "client-token-0123456789"

    func call(_ port: Int, _ method: HTTPMethod, _ path: String, _ body: String?) async throws -> SyncSystem.Reply {
        try await LoopbackRequest.send(port, method, path, body, token: Self.token)
    }
}
