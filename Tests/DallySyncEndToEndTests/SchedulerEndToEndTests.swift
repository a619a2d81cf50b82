import DallyCore
import DallyTestSupport
import Foundation
import Testing

/// The scheduler end to end: a real gateway with two uplinks (`wifi`, `lte`) to a real cloud,
/// each through a proxy that records what crossed it, time moved by hand.
@Suite struct SchedulerEndToEndTests {
    /// Notes (wifi only) never cross lte; orders go at their deadline over lte while wifi is
    /// down; a notes deadline that passes with wifi down is counted as missed and the notes go
    /// the moment wifi is back; local-only tasks never leave the box; the gateway's counters
    /// agree with what the proxies saw.
    @Test func policiesHoldPerUplinkAndMissesAreCounted() async throws {
        try await UplinkSystem.run { system in
            let t0 = system.t0
            // At start every table is due for its first pull: one wake of the cheapest uplink.
            try await system.settle("first pull") { system.uplink("wifi", in: $0)?["wake_ups"]?.int == 1 }
            #expect(system.wifi.batches.count == 1)
            #expect(system.wifi.batches.first?.uploads.isEmpty == true)
            #expect(system.wifi.batches.first?.pulls == ["orders", "notes", "docs"])

            try await system.put("orders", "o1", #"{"customer":"Ada","total":3}"#)
            try await system.put("notes", "n1", #"{"body":"a photo"}"#)
            try await system.put("tasks", "t1", #"{"title":"stays here"}"#)
            try await system.settle("deadline of o1 planned") { $0["sync"]?["next_wake_at"]?.int == t0 + 120_000 }
            #expect(system.wifi.batches.count == 1)

            try await system.setUplink("wifi", "unavailable")
            system.advance(by: .seconds(119))
            try await system.settle("a second before the deadline") { $0["sync"]?["next_wake_at"]?.int == t0 + 120_000 }
            #expect(system.lte.exchanges.isEmpty)
            system.advance(by: .seconds(1))
            let afterOrders = try await system.settle("orders over lte") {
                system.uplink("lte", in: $0)?["wake_ups"]?.int == 1
            }
            #expect(system.lte.batches.count == 1)
            #expect(system.lte.batches.first?.uploads == ["orders"])
            #expect(!system.lte.tablesSeen.contains("notes"))
            #expect(afterOrders["tables"]?["orders"]?["outbox_pending"]?.int == 0)
            #expect(afterOrders["tables"]?["notes"]?["outbox_pending"]?.int == 1)
            #expect(afterOrders["sync"]?["next_wake_at"]?.int == t0 + 600_000)

            // The notes deadline passes with no wifi: counted once, nothing crosses lte.
            system.advance(by: .seconds(480))
            let missed = try await system.settle("notes deadline missed") {
                $0["tables"]?["notes"]?["deadline_misses"]?.int == 1
            }
            #expect(missed["tables"]?["orders"]?["deadline_misses"]?.int == 0)
            #expect(system.lte.batches.count == 1)
            #expect(system.uplink("lte", in: missed)?["wake_ups"]?.int == 1)
            system.advance(by: .seconds(60))
            try await system.settle("still waiting") { $0["tables"]?["notes"]?["outbox_pending"]?.int == 1 }
            #expect(try await system.stats()["tables"]?["notes"]?["deadline_misses"]?.int == 1)

            // Wifi is back: the notes go at once, over wifi.
            try await system.setUplink("wifi", "auto")
            let delivered = try await system.settle("notes over wifi") {
                system.uplink("wifi", in: $0)?["wake_ups"]?.int == 2
            }
            #expect(delivered["tables"]?["notes"]?["outbox_pending"]?.int == 0)
            #expect(system.wifi.batches.last?.uploads == ["notes"])
            #expect(!system.lte.tablesSeen.contains("notes"))
            #expect(!system.wifi.tablesSeen.contains("tasks") && !system.lte.tablesSeen.contains("tasks"))
            #expect(delivered["tables"]?["tasks"]?["outbox_pending"]?.int == 0)

            // What the gateway counted is what crossed each network.
            for (name, proxy) in [("wifi", system.wifi), ("lte", system.lte)] {
                let counters = system.uplink(name, in: delivered)
                #expect(counters?["requests"]?.int == Int64(proxy.exchanges.count), "\(name): \(proxy.exchanges.map { "\($0.method) \($0.path)" })")
                #expect((counters?["bytes_up"]?.int ?? 0) > 0)
                #expect((counters?["bytes_up"]?.int ?? .max) < Int64(proxy.bytes.up))
                #expect((counters?["bytes_down"]?.int ?? .max) < Int64(proxy.bytes.down))
            }
            let cloud = try await system.base.cloudRequest(
                .GET, "/stats", as: nil, headers: [("Authorization", "Bearer \(SyncSystem.cloudAdmin)")]
            ).json
            #expect(cloud["tables"]?["orders"]?["live"]?.int == 1)
            #expect(cloud["tables"]?["notes"]?["live"]?.int == 1)
            #expect(cloud["tables"]?["tasks"]?["live"]?.int == 0)
        }
    }

    /// A batch whose wifi transfer fails is resent over lte with the same batch id, and the
    /// cloud applies it once.
    @Test func aBatchInFlightOnAFailingUplinkIsReroutedWithItsID() async throws {
        try await UplinkSystem.run { system in
            try await system.settle("first pull") { system.uplink("wifi", in: $0)?["wake_ups"]?.int == 1 }
            system.wifi.refuseBatches(true)
            try await system.put("orders", "o1", #"{"customer":"Ada"}"#)
            try await system.put("orders", "o2", #"{"customer":"Bob"}"#)
            system.advance(by: .seconds(120))
            let stats = try await system.settle("re-routed") { system.uplink("lte", in: $0)?["rerouted"]?.int == 1 }
            #expect(stats["tables"]?["orders"]?["outbox_pending"]?.int == 0)
            #expect(stats["tables"]?["orders"]?["outbox_in_flight"]?.int == 0)
            let refused = try #require(system.wifi.exchanges.last { !$0.forwarded })
            let resent = try #require(system.lte.batches.first)
            #expect(refused.batchID == resent.batchID)
            #expect(resent.uploads == ["orders"])
            // The batch asked down only what lte may bring: notes (wifi only) were left out.
            #expect(!resent.pulls.contains("notes"))
            #expect(system.uplink("wifi", in: stats)?["failures"]?.int == 1)
            let cloud = try await system.base.cloudRequest(
                .GET, "/stats", as: nil, headers: [("Authorization", "Bearer \(SyncSystem.cloudAdmin)")]
            ).json
            #expect(cloud["tables"]?["orders"]?["version"]?.int == 2)
        }
    }

    /// Pending changes keep their deadlines across a restart: the clock moves on while the
    /// gateway is down, and the restarted gateway sends at the original deadline, not later.
    @Test func aRestartKeepsTheOriginalDeadlines() async throws {
        try await UplinkSystem.run { system in
            let t0 = system.t0
            try await system.settle("first pull") { system.uplink("wifi", in: $0)?["wake_ups"]?.int == 1 }
            try await system.put("orders", "o1", #"{"customer":"Ada"}"#)
            try await system.settle("deadline planned") { $0["sync"]?["next_wake_at"]?.int == t0 + 120_000 }
            try await system.stopGateway()
            system.advance(by: .seconds(90))
            try await system.startGateway()
            // The pull was recorded before the restart: nothing is due until o1's deadline.
            let restarted = try await system.settle("deadline kept") {
                $0["sync"]?["next_wake_at"]?.int == t0 + 120_000
            }
            #expect(system.uplink("wifi", in: restarted)?["wake_ups"]?.int == 0)
            #expect(system.wifi.batches.count == 1)
            system.advance(by: .seconds(30))
            // Awaited, not read once: the one wake at the deadline carries o1 (a second wake
            // would count 2, and the wait would end in a failure saying so). Read once the
            // first time the loop was seen idle after a wake, it failed once under a full
            // suite's load (2026-11-28) with o1 still pending and no batch after the pull.
            let sent = try await system.settle("sent at the deadline") {
                system.uplink("wifi", in: $0)?["wake_ups"]?.int == 1 && $0["tables"]?["orders"]?["outbox_pending"]?.int == 0
            }
            #expect(system.uplink("wifi", in: sent)?["wake_ups"]?.int == 1)
            #expect(system.wifi.batches.last?.uploads == ["orders"])
        }
    }

    /// A sync-now sends at once, but only over a network the table allows: notes wait while
    /// wifi is down (202), and go when it is back.
    @Test func syncNowOverridesTheDelayNotTheNetworks() async throws {
        try await UplinkSystem.run { system in
            try await system.settle("first pull") { system.uplink("wifi", in: $0)?["wake_ups"]?.int == 1 }
            try await system.setUplink("wifi", "unavailable")
            try await system.put("notes", "n1", #"{"body":"a photo"}"#)
            let queued = try await system.call(.POST, "/v1/tables/notes/sync")
            #expect(queued.status == 202)
            #expect(queued.json["reason"]?.string?.contains("notes") == true)
            #expect(system.lte.exchanges.isEmpty)
            try await system.put("orders", "o1", #"{"customer":"Ada"}"#)
            let synced = try await system.call(.POST, "/v1/tables/orders/sync")
            #expect(synced.status == 200)
            #expect(synced.json["accepted"]?.int == 1)
            #expect(system.lte.batches.map(\.uploads) == [["orders"]])
            try await system.setUplink("wifi", "available")
            let stats = try await system.settle("notes after wifi") { $0["tables"]?["notes"]?["outbox_pending"]?.int == 0 }
            #expect(system.wifi.batches.last?.uploads == ["notes"])
            #expect(!system.lte.tablesSeen.contains("notes"))
            #expect(stats["tables"]?["notes"]?["deadline_misses"]?.int == 0)
        }
    }

    /// A sync-now that comes while a cycle is failing gets a try of its own after it: the
    /// failure's backoff (a minute here) does not answer it `queued` (the cloud refused a
    /// batch a moment before it came back).
    @Test func aSyncNowDuringAFailingCycleIsTriedAfterIt() async throws {
        try await UplinkSystem.run(retry: ("60s", "60s")) { system in
            try await system.settle("first pull") { system.uplink("wifi", in: $0)?["wake_ups"]?.int == 1 }
            system.wifi.holdBatches()
            try await system.put("notes", "n1", #"{"body":"a photo"}"#)
            system.advance(by: .seconds(600))
            #expect(try await eventually(within: .seconds(30)) { system.wifi.heldBatches == 1 })
            async let asked = system.call(.POST, "/v1/tables/notes/sync")
            #expect(try await eventually(within: .seconds(30)) {
                try await system.stats()["sync"]?["requests_waiting"]?.int == 1
            })
            system.wifi.releaseBatches(dropping: true)
            let synced = try await asked
            #expect(synced.status == 200, "\(synced.body)")
            #expect(synced.json["accepted"]?.int == 1)
            let stats = try await system.stats()
            #expect(system.uplink("wifi", in: stats)?["failures"]?.int == 1)
            #expect(stats["sync"]?["requests_waiting"]?.int == 0)
            #expect(system.wifi.batches.map(\.forwarded) == [true, false, true])
        }
    }

    /// The notify long-poll is held only over classes `notify_networks` allows.
    @Test func notifyRunsOnlyOverAllowedClasses() async throws {
        try await UplinkSystem.run(notifyNetworks: ["wifi"]) { system in
            try await system.settle("notify held over wifi") { _ in system.wifi.started.contains("/v1/notify") }
            try await system.setUplink("wifi", "unavailable")
            try await system.put("orders", "o1", #"{"customer":"Ada"}"#)
            _ = try await system.call(.POST, "/v1/tables/orders/sync")
            try await system.settle("idle") { _ in true }
            #expect(!system.lte.started.contains("/v1/notify"))
            #expect(system.lte.batches.count == 1)
        }
    }

    /// Bad input to the uplink admin route changes nothing and says why.
    @Test func uplinkOverridesRefuseBadInput() async throws {
        try await UplinkSystem.run { system in
            let admin = SyncSystem.gatewayAdmin
            let unknown = try await system.call(.PUT, "/v1/admin/uplinks/nope", body: #"{"availability":"auto"}"#, token: admin)
            #expect(unknown.status == 404)
            #expect(unknown.errorCode == "not_found")
            #expect(unknown.json["error"]?["message"]?.string?.contains("wifi, lte") == true)
            for body in [#"{"availability":"sometimes"}"#, #"{"state":"auto"}"#, #"[]"#, #"{}"#] {
                let reply = try await system.call(.PUT, "/v1/admin/uplinks/wifi", body: body, token: admin)
                #expect(reply.status == 400, "\(body)")
                #expect(reply.errorCode == "bad_request", "\(body)")
            }
            let malformed = try await system.call(.PUT, "/v1/admin/uplinks/wifi", body: "{", token: admin)
            #expect(malformed.errorCode == "malformed_json")
            let client = try await system.call(.PUT, "/v1/admin/uplinks/wifi", body: #"{"availability":"auto"}"#)
            #expect(client.status == 403)
            let listed = try await system.call(.GET, "/v1/admin/uplinks", token: admin)
            #expect(listed.json["uplinks"]?.array?.map { $0["availability"]?.string } == ["auto", "auto"])
            #expect(listed.json["uplinks"]?.array?.map { $0["availability_changes"]?.int } == [0, 0])
            #expect(listed.json["uplinks"]?.array?.map { $0["availability_changed_at"] } == [.null, .null])
            system.advance(by: .seconds(5))
            let set = try await system.call(.PUT, "/v1/admin/uplinks/lte", body: #"{"availability":"unavailable"}"#, token: admin)
            #expect(set.json["available"]?.bool == false)
            #expect(set.json["availability_changes"]?.int == 1)
            // When it changed, on the gateway's clock.
            let expected = system.t0 + 5_000
            #expect(set.json["availability_changed_at"]?.int.map { Int64($0) } == expected)
        }
    }

    /// Wifi flaps every few seconds while notes and orders are written: nothing is stranded,
    /// notes never cross lte, and every note reaches the cloud.
    @Test func flappingAvailabilityNeverStrandsAChange() async throws {
        try await UplinkSystem.run { system in
            try await system.settle("first pull") { system.uplink("wifi", in: $0)?["wake_ups"]?.int == 1 }
            for step in 0..<40 {
                try await system.setUplink("wifi", step % 2 == 0 ? "unavailable" : "auto")
                try await system.put("notes", "n\(step)", #"{"body":"note \#(step)"}"#)
                if step % 3 == 0 { try await system.put("orders", "o\(step)", #"{"customer":"c\#(step)"}"#) }
                system.advance(by: .seconds(Int64(3 + step % 5)))
                try await system.settle("step \(step)")
            }
            try await system.setUplink("wifi", "auto")
            system.advance(by: .seconds(600))
            let stats = try await system.settle("everything delivered") {
                $0["tables"]?["notes"]?["outbox_pending"]?.int == 0 && $0["tables"]?["orders"]?["outbox_pending"]?.int == 0
            }
            #expect(stats["tables"]?["notes"]?["outbox_in_flight"]?.int == 0)
            #expect(!system.lte.tablesSeen.contains("notes"))
            // Every deadline fell while wifi was up (they are minutes away, the flaps seconds).
            #expect(stats["tables"]?["notes"]?["deadline_misses"]?.int == 0)
            #expect(stats["tables"]?["orders"]?["deadline_misses"]?.int == 0)
            let cloud = try await system.base.cloudRequest(
                .GET, "/stats", as: nil, headers: [("Authorization", "Bearer \(SyncSystem.cloudAdmin)")]
            ).json
            #expect(cloud["tables"]?["notes"]?["live"]?.int == 40)
            #expect(cloud["tables"]?["orders"]?["live"]?.int == 14)
        }
    }
}
