import AsyncHTTPClient
import DallyTestSupport
import Foundation
import NIOCore
import NIOPosix
import Testing

/// The servers as systemd or a container runtime runs them: real processes with
/// `log_format = "json"`, stopped with SIGTERM.
@Suite struct ProcessLifecycleTests {
    static let clientToken = "lifecycle-client-token-0123456789"
    static let adminToken = "lifecycle-admin-token-0123456789"

    func system(_ root: String) -> SystemConfig {
        var system = SystemConfig(
            tables: [.init("orders", columns: ["customer TEXT"])], gateways: [.init(id: "gw-a", secret: "gw-a-secret-0123456789")],
            clients: [.init(name: "app", token: Self.clientToken)], cloudAdminToken: Self.adminToken,
            gatewayAdminToken: Self.adminToken, logLevel: "info", loopbackAnyPort: true)
        system.logFormat = "json"
        return system
    }

    /// Every line of `log` is one JSON object; the objects.
    func jsonLines(_ log: String) throws -> [[String: Any]] {
        try log.split(separator: "\n").map { line in
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                throw TestFailure("not a JSON object: \(line)")
            }
            return object
        }
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: GatewayProcess.executable.path)))
    func aGatewayStoppedWithSIGTERMAnswersItsLongPollsLogsWhyAndExitsZero() async throws {
        let root = ScratchSpace.path("dally-lifecycle-")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let config = root + "/gateway.toml"
        try system(root).gatewayTOML("gw-a", dataDirectory: root + "/gw").write(toFile: config, atomically: true, encoding: .utf8)
        let gateway = try await offPool { try GatewayProcess(config: config) }
        let http = HTTPClient.shared
        let base = "http://127.0.0.1:\(gateway.port)"

        let longPoll = Task {
            // The longest wait the gateway allows, and a client that waits longer still: the poll
            // ends with the gateway's SIGTERM answer, or with an error if the gateway exits
            // without answering, however slow a loaded machine makes the start and the stop.
            var request = HTTPClientRequest(url: base + "/v1/tables/orders/changes?since=0&wait=120")
            request.headers.add(name: "Authorization", value: "Bearer \(Self.clientToken)")
            let response = try await http.execute(request, timeout: .seconds(600))
            return Int(response.status.code)
        }
        // Parked when the gateway counts one waiter.
        for _ in 0..<1000 {
            var stats = HTTPClientRequest(url: base + "/stats")
            stats.headers.add(name: "Authorization", value: "Bearer \(Self.adminToken)")
            let body = try await http.execute(stats, timeout: .seconds(10)).body.collect(upTo: 1 << 20)
            if String(buffer: body).contains(#""current":1"#) { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        let status = await Task.detached { gateway.terminate() }.value
        #expect(status == 0)
        #expect(try await longPoll.value == 200)
        let lines = try jsonLines(gateway.log)
        let listening = try #require(lines.first { $0["message"] as? String == "gateway listening" })
        #expect(listening["version"] as? String != nil && listening["level"] as? String == "info")
        let stopped = try #require(lines.last)
        #expect(stopped["message"] as? String == "gateway stopped")
        #expect((stopped["reason"] as? String)?.contains("signal") == true)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: GatewayProcess.executable.path)))
    func aCloudStoppedWithSIGTERMLogsWhyAndExitsZero() async throws {
        let root = ScratchSpace.path("dally-lifecycle-")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let config = root + "/cloud.toml"
        try system(root).cloudTOML(dataDirectory: root + "/cloud").write(toFile: config, atomically: true, encoding: .utf8)
        let cloud = try await offPool { try GatewayProcess(config: config, command: "cloud") }
        let status = await Task.detached { cloud.terminate() }.value
        #expect(status == 0)
        let lines = try jsonLines(cloud.log)
        #expect(lines.contains { $0["message"] as? String == "cloud listening" && $0["version"] != nil })
        #expect(lines.last?["message"] as? String == "cloud stopped")
    }

    /// The most common start-up mistake, a port another process holds: told with the address and
    /// what to do, exit 5 (NIO's `bind(descriptor:ptr:bytes:): Address already in use)` and exit 1
    /// before), for the gateway and the cloud alike.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: GatewayProcess.executable.path)))
    func aServerWhosePortIsTakenSaysSoAndExitsFive() async throws {
        let root = ScratchSpace.path("dally-lifecycle-")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        // Holds a port as another program would.
        let holder = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(holder.localAddress?.port)
        let files = [
            ("gateway", try system(root).gatewayTOML("gw-a", dataDirectory: root + "/gw")),
            ("cloud", try system(root).cloudTOML(dataDirectory: root + "/cloud")),
        ]
        for (command, toml) in files {
            let config = root + "/\(command).toml"
            try toml.write(toFile: config, atomically: true, encoding: .utf8)
            let run = try await offPool {
                try SpawnedProcess.output(
                    GatewayProcess.executable.path, [command, "--config", config, "--port", "\(port)"], mergingErrors: true)
            }
            #expect(run.status == 5, "\(command): \(run.output)")
            #expect(
                run.output.contains("dally: cannot listen on 127.0.0.1:\(port): address already in use (errno \(EADDRINUSE)); another process listens there"),
                "\(command): \(run.output)")
        }
        try await holder.close()
        // A port out of range is refused before anything starts: the socket layer took it
        // modulo 65,536 (`--port 99999` listened on 34463).
        let config = root + "/gateway.toml"
        let outOfRange = try await offPool {
            try SpawnedProcess.output(GatewayProcess.executable.path, ["gateway", "--config", config, "--port", "99999"], mergingErrors: true)
        }
        #expect(outOfRange.status == 2, "\(outOfRange.output)")
        #expect(outOfRange.output.contains("--port must be 0 to 65535, got 99999"), "\(outOfRange.output)")
    }

    /// A database file SQLite finds damaged (here, not a database at all) is told as such with
    /// what to do, exit 3, for the gateway and the cloud: it was `Error: SQLite error 26: file is
    /// not a database - while executing …`, exit 1.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: GatewayProcess.executable.path)))
    func aDamagedDatabaseFileIsToldWithWhatToDoAndExitsThree() async throws {
        let root = ScratchSpace.path("dally-lifecycle-")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let files = [
            ("gateway", "gw", "replica.sqlite", try system(root).gatewayTOML("gw-a", dataDirectory: root + "/gw")),
            ("cloud", "cloud", "cloud.sqlite", try system(root).cloudTOML(dataDirectory: root + "/cloud")),
        ]
        for (command, directory, file, toml) in files {
            let config = root + "/\(command).toml"
            try toml.write(toFile: config, atomically: true, encoding: .utf8)
            try FileManager.default.createDirectory(atPath: root + "/" + directory, withIntermediateDirectories: true)
            try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: root + "/\(directory)/\(file)"))
            let run = try await offPool {
                try SpawnedProcess.output(GatewayProcess.executable.path, [command, "--config", config], mergingErrors: true)
            }
            #expect(run.status == 3, "\(command): \(run.output)")
            #expect(run.output.contains("a database file in \(root)/\(directory) is damaged (SQLite: file is not a database)"), "\(command): \(run.output)")
            #expect(run.output.contains("restore the data directory from a backup"), "\(command): \(run.output)")
            #expect(run.output.contains("move it aside") == (command == "gateway"), "\(command): \(run.output)")
        }
    }
}
