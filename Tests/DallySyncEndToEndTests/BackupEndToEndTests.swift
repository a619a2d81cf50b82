import AsyncHTTPClient
import DallyCore
import DallyStore
import DallyTestSupport
import Foundation
import NIOCore
import Testing

/// `dally backup` as an operator runs it: a separate process copying a running gateway's data
/// directory; the copy opens as a replica with every row that was saved.
@Suite struct BackupEndToEndTests {
    static let token = "backup-client-token-0123456789"

    func backup(_ dataDir: String, to destination: String) throws -> (status: Int32, output: String) {
        try SpawnedProcess.output(
            GatewayProcess.executable.path, ["backup", "--data-dir", dataDir, "--to", destination], mergingErrors: true)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: GatewayProcess.executable.path)))
    func aCopyTakenWhileTheGatewayRunsHoldsEverySavedRow() async throws {
        let system = SystemConfig(
            tables: [.init("orders", columns: ["customer TEXT"])], gateways: [],
            clients: [.init(name: "app", token: Self.token)], cloudAdminToken: "", gatewayAdminToken: "backup-admin-0123456789")
        let live = LiveSystem(config: system)
        let dataDir = live.directory("gw")
        try await live.startGateway("gw", try system.gateway("gw", dataDirectory: dataDir))
        let base = "http://127.0.0.1:\(live.port(of: "gw"))"
        for n in 0..<50 {
            var put = HTTPClientRequest(url: base + "/v1/tables/orders/rows/o\(n)")
            put.method = .PUT
            put.headers.add(name: "Authorization", value: "Bearer \(Self.token)")
            put.body = .bytes(ByteBuffer(string: #"{"values":{"customer":"c\#(n)"}}"#))
            let response = try await HTTPClient.shared.execute(put, timeout: .seconds(10))
            _ = try await response.body.collect(upTo: 4096)
            #expect(response.status.code == 200)
        }
        let destination = ScratchSpace.path("dally-backup-")
        let copied = try await Task.detached { try backup(dataDir, to: destination) }.value
        #expect(copied.status == 0, "\(copied.output)")
        #expect(copied.output.contains("replica.sqlite") && copied.output.contains("chunks.sqlite"))
        // Into the same place again: refused, nothing overwritten.
        let again = try await Task.detached { try backup(dataDir, to: destination) }.value
        #expect(again.status == 1 && again.output.contains("is not empty"), "\(again.output)")
        // Nor into a directory holding anything else (a stale -wal would be read into the copy).
        let cluttered = ScratchSpace.path("dally-backup-")
        try FileManager.default.createDirectory(atPath: cluttered, withIntermediateDirectories: true)
        try "x".write(toFile: cluttered + "/replica.sqlite-wal", atomically: true, encoding: .utf8)
        let refused = try await Task.detached { try backup(dataDir, to: cluttered) }.value
        #expect(refused.status == 1 && refused.output.contains("is not empty"), "\(refused.output)")
        #expect(!FileManager.default.fileExists(atPath: cluttered + "/replica.sqlite"))
        try await live.shutdown()

        let restored = try ReplicaStore.open(directory: destination, tables: try system.gateway("gw", dataDirectory: destination).tables)
        #expect(restored.counts["orders"]?.live == 50)
        #expect(try await restored.row(table: "orders", id: "o49")?.values == [.text("c49")])
        try restored.close()
        try? FileManager.default.removeItem(atPath: destination)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: GatewayProcess.executable.path)))
    func aDirectoryWithoutDatabasesIsRefused() throws {
        let empty = ScratchSpace.path("dally-empty-")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let result = try backup(empty, to: empty + "/copy")
        #expect(result.status == 1 && result.output.contains("holds no Dally database"))
    }
}
