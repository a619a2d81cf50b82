import DallyCore
import DallyTestSupport
import Testing

/// How a gateway finds its cloud back after an outage: each uplink's probe, on the manual clock.
@Suite struct ProbeEndToEndTests {
    /// The probes `proxy` saw begin.
    static func probes(_ proxy: InspectingProxy) -> Int { proxy.started.filter { $0 == "/healthz" }.count }

    /// Stops the cloud once the gateway's first pull is done, and moves the clock a minute, to
    /// the probes of both uplinks (every 60 s in these tests), which find it down.
    static func stopTheCloudUntilBothProbesFail(_ system: UplinkSystem) async throws {
        try await system.settle("first pull")
        try await system.base.stopCloud()
        system.advance(by: .seconds(60))
        try await system.settle("both probes failed") { stats in
            ["wifi", "lte"].allSatisfy { system.uplink($0, in: stats)?["available"]?.bool == false }
        }
    }

    /// While the cloud gives no answer, `wifi` probes every `down_probe_interval` (2 s) and is
    /// back 2 s after the cloud; `lte`, with no shorter interval, keeps its `probe_interval`
    /// (60 s) and pays for no extra probe.
    @Test func aSilentCloudIsProbedAtTheDownIntervalOnlyWhereItIsSet() async throws {
        try await UplinkSystem.run(probes: ["wifi": ("60s", "2s"), "lte": ("60s", nil)]) { system in
            try await Self.stopTheCloudUntilBothProbesFail(system)
            #expect(Self.probes(system.wifi) == 1)
            #expect(Self.probes(system.lte) == 1)

            system.advance(by: .seconds(2))
            #expect(try await eventually(within: .seconds(30)) { Self.probes(system.wifi) == 2 })
            // Failed, not merely started at the proxy: a probe still on its way to the cloud
            // when it comes back would find it, and the next would not be needed.
            try await system.settle("the second probe failed") {
                system.uplink("wifi", in: $0)?["probe_failures"]?.int == 2
            }

            try await system.base.startCloud()
            system.advance(by: .seconds(2))
            try await system.settle("wifi back") { system.uplink("wifi", in: $0)?["available"]?.bool == true }
            #expect(Self.probes(system.wifi) == 3)
            #expect(Self.probes(system.lte) == 1)
            let lteDown = try await system.stats()
            #expect(system.uplink("lte", in: lteDown)?["available"]?.bool == false)

            // Back up, wifi returns to its minute: the next probes of both come a minute on.
            system.advance(by: .seconds(56))
            try await system.settle("lte back") { system.uplink("lte", in: $0)?["available"]?.bool == true }
            #expect(Self.probes(system.lte) == 2)
            #expect(Self.probes(system.wifi) == 3)
        }
    }

    /// A sync-now does not wait for the next probe of an uplink its probe found down: the
    /// uplinks its table may use are probed at once, and the changes go when the cloud is back.
    /// (Before, it was answered "no uplink … is available" until the next probe, a minute away
    /// here, as on a metered class.)
    @Test func aSyncNowProbesTheUplinksItsTableMayUseThatTheProbeFoundDown() async throws {
        try await UplinkSystem.run(probes: ["wifi": ("60s", nil), "lte": ("60s", nil)]) { system in
            try await Self.stopTheCloudUntilBothProbesFail(system)
            try await system.put("notes", "n1", #"{"body":"back"}"#)

            // Still down while the cloud is: probed, refused, told so.
            let refused = try await system.call(.POST, "/v1/tables/notes/sync")
            #expect(refused.status == 202, "\(refused.body)")
            #expect(Self.probes(system.wifi) == 2)

            try await system.base.startCloud()
            // `notes` may use wifi only: wifi is probed, found, and carries the note; lte is not
            // probed and stays down until its own probe.
            let synced = try await system.call(.POST, "/v1/tables/notes/sync")
            #expect(synced.status == 200, "\(synced.body)")
            #expect(synced.json["accepted"]?.int == 1)
            #expect(Self.probes(system.wifi) == 3)
            #expect(Self.probes(system.lte) == 1)
            let stats = try await system.stats()
            #expect(system.uplink("wifi", in: stats)?["available"]?.bool == true)
            #expect(system.uplink("lte", in: stats)?["available"]?.bool == false)
        }
    }

    /// The notify stream, cut by the outage and waiting out a minute's backoff, comes back the
    /// moment the probe finds the cloud, not at the end of its wait.
    @Test func theNotifyStreamReturnsWhenTheProbeFindsTheCloud() async throws {
        try await UplinkSystem.run(notifyNetworks: ["wifi"], probes: ["wifi": ("60s", "2s")], retry: ("60s", "60s")) {
            system in
            let connected = { @Sendable () async throws -> Bool in
                try await system.stats()["sync"]?["notify_connected"]?.int == 1
            }
            #expect(try await eventually(within: .seconds(30)) { try await connected() })
            try await system.base.stopCloud()
            #expect(try await eventually(within: .seconds(30)) { try await !connected() })
            system.advance(by: .seconds(2))
            try await system.settle("wifi down") { system.uplink("wifi", in: $0)?["available"]?.bool == false }

            try await system.base.startCloud()
            system.advance(by: .seconds(2))
            try await system.settle("wifi back") { system.uplink("wifi", in: $0)?["available"]?.bool == true }
            // 4 s after the cut, 56 s before the notify loop's own retry.
            #expect(try await eventually(within: .seconds(30)) { try await connected() })
        }
    }
}
