import AsyncHTTPClient
import DallyCore
import DallyTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// A real full disk, not SQLite's `max_page_count`: the gateway's data directory on a 3 MiB
/// tmpfs, its free-space floor off, written until the filesystem itself refuses (ENOSPC).
/// Every write answered 200 must survive a kill -9 and a restart on the disk still full.
///
/// Mounting needs root, allowed to mount (as CI runs); elsewhere the test is off.
@Suite struct FullDiskProcessTests {
    /// A tmpfs to fill, and the gateway's binary to fill it with.
    static let canRun = TmpfsMount.isPermitted && FileManager.default.isExecutableFile(atPath: GatewayProcess.executable.path)

    let token = "client-token-0123456789"

    @Test(.enabled(if: canRun), .timeLimit(.minutes(2)))
    func aFilesystemThatFillsRefusesWritesKeepsReadsAndLosesNothingAcknowledged() async throws {
        let root = ScratchSpace.path("dally-full-disk-")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let mounted = try TmpfsMount(size: "3m")
        defer { mounted.unmount() }
        let disk = mounted.path
        let config = root + "/gateway.toml"
        try """
            [server]
            host = "127.0.0.1"
            data_dir = "\(disk)/gateway"
            log_level = "info"
            [store]
            min_free_bytes = 0
            [admin]
            token = "admin-token-0123456789"
            [[clients]]
            name = "app"
            token = "\(token)"
            read = ["*"]
            write = ["*"]
            [cloud]
            url = "http://127.0.0.1:\(try FreePort.find())"
            gateway_id = "gw"
            secret = "gateway-secret-0123456789"
            [[tables]]
            name = "notes"
            columns = ["body TEXT"]
            [[tables]]
            name = "photos"
            columns = ["image OBJECT"]
            """.write(toFile: config, atomically: true, encoding: .utf8)

        let gateway = try await offPool { try GatewayProcess(config: config) }
        // Before the unmount (defers run last first): a process with files open keeps it busy.
        defer { if gateway.process.isRunning { gateway.kill9() } }
        var acknowledged: [String] = []
        var refusal: SyncSystem.Reply?
        for request in 0..<1_000 where refusal == nil {
            let ids = (0..<20).map { "n\(request)-\($0)" }
            let rows = ids.map { #"{"id":"\#($0)","values":{"body":"\#(String(repeating: "x", count: 200))\#(UUID())"}}"# }
            let reply = try await call(gateway.port, .POST, "/v1/tables/notes/batch", #"{"created":[\#(rows.joined(separator: ","))]}"#)
            switch reply.status {
            case 200: acknowledged += ids
            case 507: refusal = reply
            default: Issue.record("a write answered \(reply.status): \(reply.body)")
            }
        }
        let full = try #require(refusal, "3 MiB never filled")
        #expect(full.errorCode == "insufficient_storage")
        #expect(full.json["error"]?["message"]?.string?.contains("disk is full") == true)
        #expect(acknowledged.count >= 100)
        // Reads go on while the disk is full.
        #expect(try await call(gateway.port, .GET, "/v1/tables/notes/rows?limit=1", nil).status == 200)
        // An object's chunks meet the same full disk: told so, not `500 internal`.
        let photo = String(repeating: "\(UUID())", count: 8_000)
        let object = try await call(gateway.port, .PUT, "/v1/tables/photos/rows/p1/objects/image", photo)
        #expect(object.status == 507, "\(object.body)")
        #expect(object.json["error"]?["message"]?.string?.contains("disk") == true, "\(object.body)")

        gateway.kill9()
        let restarted = try await offPool { try GatewayProcess(config: config) }
        defer { _ = restarted.terminate() }
        var present = Set<String>()
        var since: Int64 = 0
        while true {
            let page = try await call(restarted.port, .GET, "/v1/tables/notes/rows?limit=500&since=\(since)", nil)
            try #require(page.status == 200, "\(page.body)")
            present.formUnion(page.json["rows"]?.array?.compactMap { $0["id"]?.string } ?? [])
            since = try #require(page.json["next_since"]?.int)
            if page.json["more"]?.bool != true { break }
        }
        #expect(Set(acknowledged).subtracting(present).isEmpty)
    }

    func call(_ port: Int, _ method: HTTPMethod, _ path: String, _ body: String?) async throws -> SyncSystem.Reply {
        try await LoopbackRequest.send(port, method, path, body, token: token)
    }
}
