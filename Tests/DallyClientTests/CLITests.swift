import DallyClient
import DallyConfig
import DallyGateway
import DallyTestSupport
import Foundation
import Logging
import Testing

/// `dally client` run as a process against a real gateway: each subcommand's output and exit
/// code, `watch` printing another client's write, bad flags.
@Suite struct CLITests {
    static func environment(_ system: ClientSystem, token: String = ClientSystem.clientToken) -> [String: String] {
        ["DALLY_URL": system.url("gw-a"), "DALLY_TOKEN": token]
    }

    static func json(_ line: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(line.utf8))
    }

    @Test func rowCommands() async throws {
        try await ClientSystem.run { system in
            let env = Self.environment(system)
            let put = try await CLIProcess.run(["put", "orders", "o1", #"{"customer":"Ada","total":12.5}"#], environment: env)
            #expect(put.status == 0, "\(put.stderr)")
            let row = try Self.json(try #require(put.lines.first))
            #expect(row["id"] == "o1")
            #expect(row["values"]?["customer"] == "Ada")
            let seq = try #require(row["seq"])

            // Values from standard input; --expected-seq from the row printed.
            guard case .int(let seen) = seq else { throw TestFailure("seq is \(seq)") }
            let patch = try await CLIProcess.run(
                ["patch", "orders", "o1", "--expected-seq", String(seen)], environment: env, input: #"{"paid":true}"#)
            #expect(patch.status == 0, "\(patch.stderr)")
            #expect(try Self.json(patch.stdout)["values"]?["paid"] == true)
            let stale = try await CLIProcess.run(
                ["patch", "orders", "o1", #"{"paid":false}"#, "--expected-seq", String(seen)], environment: env)
            #expect(stale.status == 1)
            #expect(stale.stderr.contains("version_mismatch"))

            let get = try await CLIProcess.run(["get", "orders", "o1", "--output", "table"], environment: env)
            #expect(get.status == 0)
            #expect(get.lines.count == 2)
            #expect(get.lines[0].hasPrefix("id"))
            #expect(get.lines[1].contains("Ada"))

            let delete = try await CLIProcess.run(["delete", "orders", "o1"], environment: env)
            #expect(delete.status == 0)
            #expect(try Self.json(delete.stdout)["deleted"] == true)
            let missing = try await CLIProcess.run(["get", "orders", "o1"], environment: env)
            #expect(missing.status == 1)
            #expect(missing.stderr.contains("not_found"))
            #expect(missing.stdout.isEmpty)

            let wrong = try await CLIProcess.run(["put", "orders", "o2", #"{"total":"x"}"#], environment: env)
            #expect(wrong.status == 1)
            #expect(wrong.stderr.contains("wrong_type"))
        }
    }

    @Test func batchAndRows() async throws {
        try await ClientSystem.run { system in
            let env = Self.environment(system)
            let ndjson = (0..<7).map { #"{"id":"o\#($0)","values":{"customer":"c\#($0)","paid":\#($0 % 2 == 0)}}"# }
                .joined(separator: "\n") + "\n" + #"{"op":"delete","id":"o6"}"# + "\n"
            let batch = try await CLIProcess.run(["batch", "orders"], environment: env, input: ndjson)
            #expect(batch.status == 0, "\(batch.stderr)")
            #expect(try Self.json(batch.stdout)["saved"]?.arrayCount == 8)

            let file = ScratchSpace.path("dally-batch-") + ".json"
            defer { try? FileManager.default.removeItem(atPath: file) }
            try #"{"updated":[{"id":"o1","values":{"paid":true}}],"created":[{"id":"bad","values":{"total":"x"}}]}"#
                .write(toFile: file, atomically: true, encoding: .utf8)
            let refused = try await CLIProcess.run(["batch", "orders", file], environment: env)
            #expect(refused.status == 1)
            let answer = try Self.json(refused.stdout)
            #expect(answer["errors"]?.arrayCount == 1)
            #expect(answer["saved"]?.arrayCount == 1)

            // A bad line is named in the file's terms, once, exit 2 (it read Foundation's
            // "DecodingError.dataCorrupted: Data was corrupted…" and ArgumentParser's usage);
            // a file that cannot be read is exit 1.
            let badLine = try await CLIProcess.run(["batch", "orders"], environment: env, input: "{\"id\":\"a\"}\nnot json\n")
            #expect(badLine.status == 2)
            #expect(badLine.stderr == "dally client: line 2 is not a batch entry: not valid JSON\n", "\(badLine.stderr)")
            let noID = try await CLIProcess.run(["batch", "orders"], environment: env, input: "{\"values\":{}}\n")
            #expect(noID.stderr == "dally client: line 1 is not a batch entry: it has no \"id\"\n", "\(noID.stderr)")
            // Standard input that cannot be read (`< somedir`) is told so, exit 1 (it trapped).
            let directory = NSTemporaryDirectory()
            for arguments in [["batch", "orders"], ["put", "orders", "o9", "-"]] {
                let unreadable = try await CLIProcess.run(arguments, environment: env, inputPath: directory)
                #expect(unreadable.status == 1, "\(arguments): \(unreadable.stderr.prefix(300))")
                #expect(unreadable.stderr == "dally client: cannot read standard input: Is a directory\n", "\(unreadable.stderr.prefix(300))")
            }
            // Values on the command line alike.
            let badValues = try await CLIProcess.run(["put", "orders", "o9", "not json"], environment: env)
            #expect(badValues.status == 2)
            #expect(
                badValues.stderr == "dally client: values must be a JSON object such as '{\"total\":12.5}': not valid JSON\n",
                "\(badValues.stderr)")
            let missing = try await CLIProcess.run(["batch", "orders", "/nonexistent/batch.ndjson"], environment: env)
            #expect(missing.status == 1)
            #expect(missing.stderr == "dally client: cannot read /nonexistent/batch.ndjson\n", "\(missing.stderr)")

            let rows = try await CLIProcess.run(["rows", "orders", "--page-size", "2"], environment: env)
            #expect(rows.status == 0)
            #expect(try rows.lines.map { try Self.json($0)["id"] } == ["o0", "o2", "o3", "o4", "o5", "o1"].map { .string($0) })
            let paid = try await CLIProcess.run(["rows", "orders", "--where", "paid:true", "--output", "table"], environment: env)
            #expect(paid.status == 0)
            #expect(paid.lines.count == 1 + 4)
            let limited = try await CLIProcess.run(["rows", "orders", "--limit", "3", "--page-size", "2"], environment: env)
            #expect(limited.lines.count == 3)
        }
    }

    @Test func watchPrintsAChangeWrittenByAnotherClient() async throws {
        try await ClientSystem.run { system in
            let watch = try CLIProcess.Running(["watch", "orders", "--wait", "5"], environment: Self.environment(system))
            defer { watch.stop() }
            try await system.with { client in
                try await client.table("orders").put(id: "w1", ["customer": "from the library"])
            }
            var lines = watch.lines.makeAsyncIterator()
            let line = try #require(await lines.next())
            let change = try Self.json(line)
            #expect(change["table"] == "orders")
            #expect(change["id"] == "w1")
            #expect(change["values"]?["customer"] == "from the library")
        }
    }

    @Test func watchSurvivesAGatewayRestart() async throws {
        try await ClientSystem.run { system in
            let watch = try CLIProcess.Running(
                ["watch", "orders", "--wait", "2", "--retry-max", "0.2"], environment: Self.environment(system))
            defer { watch.stop() }
            var lines = watch.lines.makeAsyncIterator()
            try await system.with { client in try await client.table("orders").put(id: "before", ["qty": 1]) }
            #expect(try Self.json(try #require(await lines.next()))["id"] == "before")
            try await system.live.stopGateway("gw-a")
            try await system.startGateway("gw-a", samePort: true)
            try await system.with { client in try await client.table("orders").put(id: "after", ["qty": 2]) }
            let after = try Self.json(try #require(await lines.next()))
            #expect(after["id"] == "after", "the change before the restart is not printed again")
            #expect(after["values"]?["qty"] == 2)
        }
    }

    @Test func objectsSyncStatsUplinksConflicts() async throws {
        try await ClientSystem.run { system in
            let env = Self.environment(system)
            let file = ScratchSpace.path("dally-cli-object-")
            let copy = file + ".copy"
            defer { for path in [file, copy] { try? FileManager.default.removeItem(atPath: path) } }
            let bytes = SeededBytes.bytes(700_000, seed: 9)
            try Data(bytes).write(to: URL(fileURLWithPath: file))
            let put = try await CLIProcess.run(["object", "put", "photos", "p1", "image", file], environment: env)
            #expect(put.status == 0, "\(put.stderr)")
            #expect(put.stderr.isEmpty, "no progress bar when standard error is not a terminal")
            #expect(try Self.json(put.stdout)["values"]?["image"]?["size"] == 700_000)
            let get = try await CLIProcess.run(["object", "get", "photos", "p1", "image", copy], environment: env)
            #expect(get.status == 0, "\(get.stderr)")
            #expect(FileManager.default.contents(atPath: copy) == Data(bytes))
            let info = try Self.json(get.stdout)
            #expect(info["size"] == 700_000)
            let toStdout = try await CLIProcess.run(["object", "get", "photos", "p1", "image"], environment: env)
            #expect(toStdout.status == 0)
            #expect(toStdout.output == Data(bytes))
            // A reader that has gone (`| head -c 10`, `| head -1`): the command ends by SIGPIPE,
            // as `cat` would, not by a trap and a backtrace (Foundation's write traps on EPIPE).
            for arguments in [["object", "get", "photos", "p1", "image"], ["rows", "photos"]] {
                let gone = try await CLIProcess.runIntoClosedPipe(arguments, environment: env)
                #expect(gone.status == SIGPIPE, "\(arguments): \(gone.status) \(gone.stderr.prefix(300))")
                #expect(gone.stderr.isEmpty, "\(arguments): \(gone.stderr.prefix(300))")
            }

            let sync = try await CLIProcess.run(["sync", "orders"], environment: env)
            #expect(sync.status == 1)
            #expect(sync.stderr.contains("sync_disabled"))

            let conflicts = try await CLIProcess.run(["conflicts", "list"], environment: env)
            #expect(conflicts.status == 0)
            #expect(conflicts.stdout.isEmpty)
            let settle = try await CLIProcess.run(["conflicts", "settle", "docs", "d1", "--take", "local"], environment: env)
            #expect(settle.status == 1)
            #expect(settle.stderr.contains("not_found"))

            let admin = Self.environment(system, token: ClientSystem.adminToken)
            let stats = try await CLIProcess.run(["stats"], environment: admin)
            #expect(stats.status == 0)
            #expect(try Self.json(stats.stdout)["tables"]?["photos"]?["rows"] == 1)
            let table = try await CLIProcess.run(["stats", "--output", "table"], environment: admin)
            #expect(table.lines.contains { $0.hasPrefix("tables.photos.rows") && $0.hasSuffix(" 1") })
            let uplinks = try await CLIProcess.run(["uplinks"], environment: admin)
            #expect(uplinks.status == 1, "a gateway without a cloud has no uplinks")
            #expect(uplinks.stderr.contains("sync_disabled"), "\(uplinks.stderr)")
            let forbidden = try await CLIProcess.run(["stats"], environment: env)
            #expect(forbidden.status == 1)
            #expect(forbidden.stderr.contains("forbidden"))
        }
    }

    @Test func syncAndUplinksWithACloud() async throws {
        try await ClientSystem.run(cloud: true) { system in
            let env = Self.environment(system)
            let admin = Self.environment(system, token: ClientSystem.adminToken)
            // The gateway's first wake after start (its declarations read, every table pulled)
            // done first: a row written while it runs may ride with it, and the sync-now below
            // would then have nothing left to send.
            #expect(try await CLIProcess.run(["sync", "notes"], environment: env).status == 0)
            #expect(try await CLIProcess.run(["put", "notes", "n1", #"{"body":"hi"}"#], environment: env).status == 0)
            let sync = try await CLIProcess.run(["sync", "notes"], environment: env)
            #expect(sync.status == 0, "\(sync.stderr)")
            let synced = try Self.json(sync.stdout)
            #expect(synced["status"] == "synced")
            #expect(synced["accepted"] == 1)

            let uplinks = try await CLIProcess.run(["uplinks"], environment: admin)
            #expect(uplinks.status == 0, "\(uplinks.stderr)")
            #expect(try Self.json(try #require(uplinks.lines.first))["name"] == "default")
            let down = try await CLIProcess.run(["uplinks", "default", "--set", "unavailable"], environment: admin)
            #expect(down.status == 0, "\(down.stderr)")
            #expect(try Self.json(down.stdout)["availability"] == "unavailable")
            #expect(try await CLIProcess.run(["patch", "notes", "n1", #"{"body":"later"}"#], environment: env).status == 0)
            let queued = try await CLIProcess.run(["sync", "notes", "--output", "table"], environment: env)
            #expect(queued.status == 0)
            #expect(queued.lines.contains { $0.hasPrefix("status") && $0.hasSuffix("queued") }, "\(queued.stdout)")
            let table = try await CLIProcess.run(["uplinks", "--output", "table"], environment: admin)
            #expect(table.lines.first?.hasPrefix("name") == true)
            #expect(table.lines.count == 2)
        }
    }

    /// A gateway serving `https` with a certificate a private CA signed: `--ca` (or `DALLY_CA`)
    /// trusts that CA; without it the certificate is refused, as an unknown one must be.
    @Test(.enabled(if: TestCertificates.opensslAvailable)) func anHTTPSGatewayIsReachedWithItsCA() async throws {
        let certificates = try TestCertificates()
        try await ClientSystem.run(gateways: []) { system in
            var config = try system.gatewayConfig("gw-a")
            config.server.tls = CertificateFiles(certificate: certificates.serverCertificate, key: certificates.serverKey)
            try await system.live.startGateway("gw-a", try Gateway(config: config, logger: Logger(label: "client-test")))
            let url = "https://127.0.0.1:\(system.live.port(of: "gw-a"))"
            var env = ["DALLY_URL": url, "DALLY_TOKEN": ClientSystem.clientToken]
            let put = try await CLIProcess.run(
                ["put", "orders", "o1", #"{"customer":"Ada"}"#, "--ca", certificates.ca], environment: env)
            #expect(put.status == 0, "\(put.stderr)")
            let untrusted = try await CLIProcess.run(["get", "orders", "o1"], environment: env)
            #expect(untrusted.status == 3, "\(untrusted.stderr)")
            env["DALLY_CA"] = certificates.ca
            let get = try await CLIProcess.run(["get", "orders", "o1"], environment: env)
            #expect(get.status == 0, "\(get.stderr)")
            #expect(try Self.json(get.stdout)["values"]?["customer"] == "Ada")
            let missing = try await CLIProcess.run(["get", "orders", "o1", "--ca", "/nonexistent/ca.pem"], environment: env)
            #expect(missing.status == 2, "\(missing.stderr)")
            #expect(missing.stderr.contains("CA certificate"))
        }
    }

    @Test func usageErrorsExitTwoAndUnreachableThree() async throws {
        let env = ["DALLY_URL": "http://127.0.0.1:1", "DALLY_TOKEN": ClientSystem.clientToken]
        for arguments in [
            ["put", "orders"], ["rows", "orders", "--bogus"], ["rows", "orders", "--where", "nocolon"],
            ["put", "orders", "o1", "[1,2]"], ["get", "orders", "o1", "--output", "yaml"],
            ["uplinks", "lte"], ["conflicts", "settle", "docs", "d1"], ["nonsense"],
            ["rows", "orders", "--limit=-5"], ["rows", "orders", "--where", "a:1", "--where", "a:2"],
            ["watch", "orders", "--wait=0"], ["watch", "orders", "--retry-max=-1"], ["watch", "orders", "--retry-max=1e300"],
            ["conflicts", "list", "--limit=0"],
            ["get", "orders", "o1", "--url", "notaurl"], ["get", "orders", "o1", "--url", "ftp://x"],
        ] {
            let result = try await CLIProcess.run(arguments, environment: env)
            #expect(result.status == 2, "\(arguments): \(result.status) \(result.stderr)")
            #expect(!result.stderr.isEmpty)
        }
        let unreachable = try await CLIProcess.run(["get", "orders", "o1"], environment: env)
        #expect(unreachable.status == 3, "\(unreachable.stderr)")
        // In the system's words, not NIO's "connection reset (error set): Connection refused)".
        #expect(unreachable.stderr.contains("gateway unreachable: GET http://127.0.0.1:1/"))
        #expect(unreachable.stderr.contains("connection refused (errno"), "\(unreachable.stderr)")
        let help = try await CLIProcess.run(["--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("Exit codes: 0 ok, 1 error from the gateway, 2 usage, 3 gateway unreachable."))
    }
}

extension JSONValue {
    var arrayCount: Int? { if case .array(let elements) = self { elements.count } else { nil } }
}
