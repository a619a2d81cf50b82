import DallyCore
import DallyFrugal
import DallyTestSupport
import Foundation
import Synchronization
import Testing

/// Slow links end to end, scaled down: a relay of 32,000 B/s stands for a satellite hop, and a
/// `request_timeout` of 1 s stands for the old fixed 30 s, so that what the old deadline cut
/// (a chunk, a batch needing longer than it) shows in seconds.
@Suite(.serialized) struct SlowLinkEndToEndTests {
    static let rate = 32_000
    static let shape = LinkShape(bytesPerSecond: rate, roundTrip: .milliseconds(40))
    /// A fixed part of 1 s, and idle judged within 5 s (beyond the buffers' drain).
    static let lines = [#"request_timeout = "1s""#, #"idle_timeout = "5s""#]

    @Test func anObjectOverALinkTooSlowForTheOldDeadlineArrivesAndTheLinkIsMeasured() async throws {
        try await SlowLinkSystem.run(shape: Self.shape, cloudLines: Self.lines) { system in
            // The gateway's first contact first (its pulls and the cloud's declarations): small
            // requests whose fixed 1 s bound a full suite on two busy cores can pass.
            try await system.syncUntil("photos", attempts: 3) { try await system.syncCounter("cycles") >= 1 }
            let failuresBefore = try await system.uplink()["failures"]?.int ?? -1
            // 320 KB of incompressible bytes: 10 s on the link, each chunk longer than 1 s.
            let object = TestObject(size: 320_000, seed: 7)
            try await system.putPhoto("p1", object)
            try await system.syncUntil("photos", attempts: 3) { try await system.syncCounter("objects_uploaded") == 1 }

            let uplink = try await system.uplink()
            #expect(uplink["failures"]?.int == failuresBefore, "\(uplink)")
            // No chunk was cut: a chunk is 4 KiB at least. Once, in a full suite on two busy
            // cores (the test took 123 s instead of 10), a small request's 79 bytes were wasted:
            // a scaled-down 1 s deadline missed, or a pooled connection the cloud had closed.
            let wasted = uplink["wasted_bytes"]?.int ?? -1
            #expect(wasted >= 0 && wasted < 4_096, "\(uplink)")
            // Measured from the chunks themselves, with no probe traffic: about the relay's rate.
            let measured = uplink["link"]?["bytes_per_second_up"]?.double ?? 0
            #expect(measured > Double(Self.rate) * 0.5 && measured < Double(Self.rate) * 1.5, "\(uplink)")
            #expect((uplink["link"]?["round_trip_ms"]?.double ?? 0) >= 40, "\(uplink)")
            // Every byte of the object crossed the link once.
            let up = system.relay.counts.bytesUp
            #expect(up >= object.size && up < object.size * 105 / 100, "\(up) bytes up for \(object.size)")
        }
    }

    @Test func chunksAndBatchesGoTwoAtATimeAndTheSharedLinkIsMeasuredWhole() async throws {
        // A long link: 200 ms round trip, a chunk or a batch several round trips long (one
        // request after another would leave at least a round trip between their bytes).
        let shape = LinkShape(bytesPerSecond: 128_000, roundTrip: .milliseconds(200))
        let lines = Self.lines + [#"target_request_time = "1s""#, "max_batch_rows = 300"]
        try await SlowLinkSystem.run(shape: shape, cloudLines: lines) { system in
            // About four chunks of 256 KiB on average: while one waits for its answer, the next goes.
            let object = TestObject(size: 1_000_000, seed: 12)
            // The wake at start (its pulls) ends first: an object written while it runs goes up
            // in it, and its ask could not have gone ahead (nothing waited when it began).
            _ = try await system.base.sync("gw-a", table: "photos")
            try await system.putPhoto("p4", object)
            try await system.syncUntil("photos", attempts: 3) { try await system.syncCounter("objects_uploaded") == 1 }
            #expect(system.uploadsOverlapped(), "no two chunk uploads went up the link at once")
            // The ask went beside the row's batch, and the manifest with the last chunks: neither
            // a round trip of its own.
            let asksAhead = try await system.syncCounter("object_asks_ahead")
            let afterObject = try await system.uplink()
            #expect(asksAhead == 1, "asks ahead: \(asksAhead); uplink: \(afterObject)")
            let sent = try await system.syncCounter("object_chunks_sent")
            #expect(try await system.syncCounter("object_chunks_asked") == sent, "a chunk asked about twice")
            #expect(try await system.syncCounter("object_manifests_early") == 1)
            let uplink = try await system.uplink()
            #expect(uplink["failures"]?.int == 0, "\(uplink)")
            // Each of two bodies going up at once sees half the link: the model counts both, so
            // it reads the link, not half of it. (A body waiting for its answer still counts as
            // sharing the link, so it may read high: more so on a loaded machine.)
            let measured = uplink["link"]?["bytes_per_second_up"]?.double ?? 0
            #expect(measured > 128_000 * 0.7 && measured < 128_000 * 2, "\(uplink)")
            let up = system.relay.counts.bytesUp
            #expect(up >= object.size && up < object.size * 103 / 100, "\(up) bytes up for \(object.size)")

            // Rows: five batches (at most a second of the link each), the next sent while one waits.
            system.relay.reset()
            let accepted = try await system.syncCounter("rows_accepted")
            try await system.writeOrders(1_500)
            try await system.syncUntil("orders") { try await system.syncCounter("rows_accepted") == accepted + 1_500 }
            #expect(system.uploadsOverlapped(), "no two batches went up the link at once")
            #expect(try await system.syncCounter("batches_resent") == 0)
        }
    }

    /// `keep_alive` is how long the uplink's pool keeps a connection with no request: set to a
    /// second, the sync-now's connection closes soon after; the default (a minute) would keep
    /// it past this test's bound.
    @Test("an uplink closes an idle connection once keep_alive has passed, and opens a new one for the next request")
    func anIdleConnectionLivesKeepAliveLong() async throws {
        try await SlowLinkSystem.run(shape: Self.shape, cloudLines: Self.lines + [#"keep_alive = "1s""#]) { system in
            let first = try await system.base.sync("gw-a", table: "orders")
            #expect(first.status == 200, "\(first.body)")
            let opened = system.relay.counts.connections
            #expect(opened >= 1)
            let closed = await eventually(within: .seconds(20)) { system.relay.openConnections == 0 }
            #expect(closed, "open: \(system.relay.openConnections)")
            let second = try await system.base.sync("gw-a", table: "orders")
            #expect(second.status == 200, "\(second.body)")
            #expect(system.relay.counts.connections > opened)
        }
    }

    @Test func aLongPollsWaitIsNotTakenForTheLinksRoundTrip() async throws {
        try await SlowLinkSystem.run(shape: Self.shape, cloudLines: Self.lines, notify: true) { system in
            // Polls the cloud holds for a second each, with no news: three of them begun.
            _ = try await eventually(within: .seconds(6)) { (try await system.uplink()["notify_polls"]?.int ?? 0) >= 3 }
            let uplink = try await system.uplink()
            #expect((uplink["notify_polls"]?.int ?? 0) >= 3, "\(uplink)")
            // The round trip is measured from requests that get an answer at once (a pull, an
            // ask), never from a long-poll's wait: unmeasured here, or about the relay's 40 ms.
            let roundTrip = uplink["link"]?["round_trip_ms"]?.double
            #expect(roundTrip == nil || roundTrip! < 500, "\(uplink)")
        }
    }

    @Test func aTransferCutHalfWayResumesWithoutSendingTheDonePartAgain() async throws {
        // Frames as long as a whole chunk once the link is measured, so the cut falls mid-frame.
        let lines = Self.lines + [#"target_request_time = "60s""#]
        try await SlowLinkSystem.run(shape: Self.shape, cloudLines: lines) { system in
            let object = TestObject(size: 480_000, seed: 8)
            try await system.putPhoto("p2", object)
            let syncing = Task { try await system.base.sync("gw-a", table: "photos") }
            // Bounded polling on the relay's count: cut once half the object has crossed.
            for _ in 0..<600 where system.relay.counts.bytesUp < object.size / 2 {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(system.relay.counts.bytesUp >= object.size / 2)
            await system.relay.cut()
            _ = try await syncing.value
            try await system.syncUntil("photos") { try await system.syncCounter("objects_uploaded") == 1 }

            let uplink = try await system.uplink()
            #expect((uplink["failures"]?.int ?? 0) >= 1, "the cut did not fail a transfer: \(uplink)")
            // The cloud kept what arrived of the cut chunk, and the resumed upload went on from there.
            #expect((uplink["resumed_bytes"]?.int ?? 0) >= 8_192, "\(uplink)")
            #expect(try await system.syncCounter("object_bytes_not_resent") >= 8_192)
            // Counted at the relay: the object crossed once, plus headers and what the cut lost
            // in the relay's own queue (a tenth of a second of the link).
            let up = system.relay.counts.bytesUp
            #expect(up < object.size * 105 / 100, "\(up) bytes up for \(object.size); \(uplink)")
        }
    }

    /// A link that stalls in the middle of a chunk for longer than the cloud's `body_timeout`:
    /// the cloud gives up on the body (its 408, the connection closed) and keeps what arrived,
    /// and the gateway, whose own idle limit is far off, resumes from there once the link moves
    /// again: the object crosses once.
    @Test func aStallLongerThanTheCloudsBodyTimeoutEndsInAResumeNotAResend() async throws {
        let lines = [#"request_timeout = "1s""#, #"idle_timeout = "30s""#, #"target_request_time = "60s""#]
        try await SlowLinkSystem.run(shape: Self.shape, cloudLines: lines, cloudBodyTimeout: .seconds(1)) { system in
            let object = TestObject(size: 320_000, seed: 12)
            try await system.putPhoto("p12", object)
            let syncing = Task { try await system.base.sync("gw-a", table: "photos") }
            // Bounded polling on the relay's count: stall once half the object has crossed.
            for _ in 0..<600 where system.relay.counts.bytesUp < object.size / 2 {
                try await Task.sleep(for: .milliseconds(20))
            }
            system.relay.hold()
            let crossedBeforeTheStall = system.relay.counts.bytesUp
            #expect(crossedBeforeTheStall >= object.size / 2)
            // Three times the cloud's body_timeout, a tenth of the gateway's idle_timeout.
            try await Task.sleep(for: .seconds(3))
            system.relay.release()
            _ = try await syncing.value
            try await system.syncUntil("photos") { try await system.syncCounter("objects_uploaded") == 1 }

            let uplink = try await system.uplink()
            // Only the cloud can have ended the transfer: the gateway would have waited 30 s.
            #expect((uplink["failures"]?.int ?? 0) >= 1, "the stall did not end a transfer: \(uplink)")
            // The frame the cloud gave up on counts as wasted, as a cut one does.
            #expect((uplink["wasted_bytes"]?.int ?? 0) > 0, "\(uplink)")
            // What crossed before the stall (less the requests' heads, a few hundred bytes) was
            // kept and not sent again: the resumed frame began at or after it.
            #expect((uplink["resumed_bytes"]?.int ?? 0) >= crossedBeforeTheStall - 2_000, "\(uplink)")
            #expect(try await system.syncCounter("object_bytes_not_resent") >= crossedBeforeTheStall - 2_000)
            // Once the link moved, what the gateway's socket still held went up towards a cloud
            // that had closed (a real link: until the cloud's reset came back); the object's
            // done half did not go again.
            let up = system.relay.counts.bytesUp
            #expect(up < object.size * 3 / 2, "\(up) bytes up for \(object.size); \(uplink)")
        }
    }

    /// A wake that resumes a cut object and has no rows to send pulls beside the walk: on a
    /// long link the pull's round trip after the last chunk's would delay the sync-now's answer.
    @Test func aWakeResumingAnObjectPullsBesideTheWalk() async throws {
        try await SlowLinkSystem.run(shape: Self.shape, cloudLines: Self.lines) { system in
            _ = try await system.base.sync("gw-a", table: "photos")
            try await system.startDirectGateway()
            let object = TestObject(size: 480_000, seed: 9)
            try await system.putPhoto("p3", object)
            let syncing = Task { try await system.base.sync("gw-a", table: "photos") }
            // The wake's batch (p3's row, and the pull riding it) answered: what another gateway
            // writes now comes down only with the next pull.
            _ = try await eventually(within: .seconds(10)) { try await system.syncCounter("rows_accepted") >= 1 }
            let head = try #require(
                try await system.base.gateway("gw-a", .GET, "/v1/tables/photos/changes?since=0").json["next_since"]?.int)
            let written = try await system.base.gateway(
                "gw-b", .PUT, "/v1/tables/photos/rows/b1", body: #"{"values":{"title":"from b"}}"#)
            #expect(written.status == 200 || written.status == 201)
            _ = try await system.base.sync("gw-b", table: "photos")
            let arrived = Task {
                try await system.base.gateway("gw-a", .GET, "/v1/tables/photos/changes?since=\(head)&wait=60")
            }
            // The wake that resumes the object (at once: the cloud had answered) still owes the
            // sync-now its pull.
            try await system.cut(onceBytesUpReach: object.size / 2)
            let page = try await arrived.value
            #expect(page.json["changes"]?.array?.first?["id"]?.string == "b1", "\(page.body)")
            // b1 came down while the rest of the object (240 KB: seven seconds of the link) was
            // still on its way.
            #expect(try await system.syncCounter("objects_uploaded") == 0)
            _ = try await syncing.value
            try await system.syncUntil("photos") { try await system.syncCounter("objects_uploaded") == 1 }
            #expect(try await system.syncCounter("object_resumed_transfers") >= 1)
        }
    }

    /// A connection cut after the cloud answered in the same wake is retried at once, not after
    /// `retry_min`, and the sync-now under way is answered when the retry is done; a second
    /// cut a few kilobytes into that retry (sooner than `retry_min`, 60 s here, and before any
    /// chunk of it went whole) waits out the backoff.
    @Test func aCutAfterTheCloudAnsweredIsRetriedAtOnceAndOneSoonAfterWaitsTheBackoff() async throws {
        try await SlowLinkSystem.run(shape: Self.shape, cloudLines: Self.lines, retry: ("60s", "60s")) { system in
            _ = try await system.base.sync("gw-a", table: "photos")
            let object = TestObject(size: 480_000, seed: 10)
            try await system.putPhoto("p4", object)
            let syncing = Task { try await system.base.sync("gw-a", table: "photos") }
            try await system.cut(onceBytesUpReach: object.size / 2)
            let answer = try await syncing.value
            #expect(answer.json["status"]?.string == "synced", "\(answer.body)")
            #expect(try await system.syncCounter("objects_uploaded") == 1)
            #expect(try await system.uplink()["failures"]?.int == 1)

            let second = TestObject(size: 480_000, seed: 11)
            try await system.putPhoto("p5", second)
            system.relay.reset()
            let again = Task { try await system.base.sync("gw-a", table: "photos") }
            try await system.cut(onceBytesUpReach: second.size / 2)
            try await system.cut(onceBytesUpReach: second.size / 2 + 4_000)
            let queued = try await again.value
            #expect(queued.json["status"]?.string == "queued", "\(queued.body)")
            #expect(try await system.syncCounter("objects_uploaded") == 1)
            #expect(try await system.uplink()["failures"]?.int == 3)
        }
    }

    /// A link that flaps cuts one transfer again and again: each cut that comes after the link
    /// held at least `retry_min` (1 s here) since the last retry at once, or carried a chunk
    /// whole, is retried at once too, and the one sync-now is answered once the object is up.
    /// The cuts are 120 KB apart, nearly four seconds of this link.
    @Test func aLinkThatFlapsDuringOneTransferIsRetriedAtOnceAtEachCut() async throws {
        try await SlowLinkSystem.run(shape: Self.shape, cloudLines: Self.lines, retry: ("1s", "60s")) { system in
            _ = try await system.base.sync("gw-a", table: "photos")
            let object = TestObject(size: 480_000, seed: 12)
            try await system.putPhoto("p6", object)
            system.relay.reset()
            let syncing = Task { try await system.base.sync("gw-a", table: "photos") }
            try await system.cut(onceBytesUpReach: object.size / 2)
            try await system.cut(onceBytesUpReach: object.size * 3 / 4)
            let answer = try await syncing.value
            #expect(answer.json["status"]?.string == "synced", "\(answer.body)")
            #expect(try await system.syncCounter("objects_uploaded") == 1)
            #expect(try await system.uplink()["failures"]?.int == 2)
        }
    }

    /// A cut's retry that goes at once asks the cloud itself: the down probe (every 100 ms on
    /// the cheapest class while the cloud is silent) leaves it be instead of adding a request
    /// and a connection of its own to a metered link. The round trip (600 ms) holds several of
    /// the probe's ticks between the cut and the retry's first answer.
    @Test func aCutsRetryAtOnceIsNotDoubledByTheDownProbe() async throws {
        let shape = LinkShape(bytesPerSecond: Self.rate, roundTrip: .milliseconds(600))
        try await SlowLinkSystem.run(shape: shape, cloudLines: Self.lines, retry: ("60s", "60s"), probeInterval: "60s") {
            system in
            _ = try await system.base.sync("gw-a", table: "photos")
            let object = TestObject(size: 200_000, seed: 12)
            try await system.putPhoto("p6", object)
            let probesBefore = try await system.uplink()["probes"]?.int ?? -1
            let syncing = Task { try await system.base.sync("gw-a", table: "photos") }
            try await system.cut(onceBytesUpReach: object.size / 2)
            let answer = try await syncing.value
            #expect(answer.json["status"]?.string == "synced", "\(answer.body)")
            let uplink = try await system.uplink()
            #expect(uplink["failures"]?.int == 1, "\(uplink)")
            #expect(uplink["probes"]?.int == probesBefore, "\(uplink)")
        }
    }

    @Test func aBatchCutHalfWayResumesWithoutSendingItsDonePartAgain() async throws {
        // A batch may take a minute of the link: the whole backlog goes as one.
        let lines = Self.lines + [#"target_request_time = "60s""#]
        try await SlowLinkSystem.run(shape: Self.shape, cloudLines: lines) { system in
            // A first small backlog measures the link (a body is framed once it is known to take
            // a second or more).
            try await system.writeOrders(100)
            try await system.syncUntil("orders") { try await system.syncCounter("rows_accepted") == 100 }
            let sentBefore = try await system.syncCounter("bytes_sent_compressed")
            let resumedBefore = try await system.uplink()["resumed_bytes"]?.int ?? 0

            try await system.writeOrders(1_500, from: 100)
            system.relay.reset()
            let syncing = Task { try await system.base.sync("gw-a", table: "orders") }
            for _ in 0..<600 where system.relay.counts.bytesUp < 120_000 {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(system.relay.counts.bytesUp >= 120_000)
            await system.relay.cut()
            _ = try await syncing.value
            try await system.syncUntil("orders") { try await system.syncCounter("rows_accepted") == 1_600 }

            let uplink = try await system.uplink()
            #expect((uplink["failures"]?.int ?? 0) >= 1, "the cut did not fail a transfer: \(uplink)")
            // The cloud kept what arrived of the cut body; the resend went on from there.
            let resumed = (uplink["resumed_bytes"]?.int ?? 0) - resumedBefore
            #expect(resumed >= 60_000, "\(uplink)")
            // Counted at the relay: the body crossed once (what the batch sent after resuming
            // plus what the cloud had kept), with headers and what the cut lost in the relay's
            // own queue.
            let body = try await system.syncCounter("bytes_sent_compressed") - sentBefore + resumed
            let up = Int64(system.relay.counts.bytesUp)
            #expect(up < body * 105 / 100, "\(up) bytes up for a body of \(body); \(uplink)")
        }
    }

    @Test func aDownloadCutHalfWayResumesByRangeWithoutFetchingTheDonePartAgain() async throws {
        let lines = Self.lines + [#"target_request_time = "60s""#]
        try await SlowLinkSystem.run(shape: Self.shape, cloudLines: lines) { system in
            // Written on gw-b, which reaches the cloud directly; gw-a fetches it over the slow link.
            try await system.startDirectGateway()
            let object = TestObject(size: 480_000, seed: 9)
            try await system.putPhoto("p3", object, on: "gw-b")
            try await system.syncUntil("photos", on: "gw-b") {
                try await system.syncCounter("objects_uploaded", on: "gw-b") == 1
            }
            let downBefore = system.relay.counts.bytesDown
            let fetching = Task { try await system.base.sync("gw-a", table: "photos") }
            // Bounded polling on the relay's count: cut once half the object has come down.
            for _ in 0..<600 where system.relay.counts.bytesDown - downBefore < object.size / 2 {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(system.relay.counts.bytesDown - downBefore >= object.size / 2)
            await system.relay.cut()
            _ = try await fetching.value
            try await system.syncUntil("photos") { try await system.syncCounter("objects_fetched") == 1 }

            let stats = try await system.stats()
            #expect((stats["sync"]?["object_bytes_not_refetched"]?.int ?? 0) >= 8_192, "\(stats["sync"] ?? .null)")
            let uplink = try await system.uplink()
            #expect((uplink["resumed_bytes"]?.int ?? 0) >= 8_192, "\(uplink)")
            // Counted at the relay: the object came down once, plus headers, manifests, pages
            // and what the cut lost in the relay's own queue.
            let down = system.relay.counts.bytesDown - downBefore
            #expect(down < object.size * 105 / 100, "\(down) bytes down for \(object.size); \(uplink)")
            // And it is whole: read back through gw-a.
            let read = try await system.base.gateway("gw-a", .GET, "/v1/tables/photos/rows/p3/objects/image")
            #expect(read.status == 200)
            #expect(read.headers.first(name: "ETag") == "\"\(object.hash.hex)\"")
        }
    }

    @Test func aBacklogOnAFastLinkGoesTwoBatchesAtATimeWhateverTheRoundTrip() async throws {
        // 100,000 B/s and a round trip of a few ms: a batch of 250 orders (~55 KB) is about half
        // a second, many round trips (one batch after another would idle the link little), but
        // the cloud would idle while the gateway records each next batch: two go at once.
        let shape = LinkShape(bytesPerSecond: 100_000, roundTrip: .milliseconds(2))
        try await SlowLinkSystem.run(shape: shape, cloudLines: Self.lines + ["max_batch_rows = 250"]) { system in
            try await system.writeOrders(1_250)
            try await system.syncUntil("orders") { try await system.syncCounter("rows_accepted") == 1_250 }
            let uplink = try await system.uplink()
            #expect(system.uploadsOverlapped(), "no two batches went up the link at once; uplink: \(uplink)")
            #expect(uplink["failures"]?.int == 0, "\(uplink)")
        }
    }

    @Test func onAFastLinkTheBatchAfterNextIsBuiltWhileTwoFly() async throws {
        // 100,000 B/s and a round trip of a few ms: a batch of 100 orders (~22 KB) crosses in a
        // fifth of a second, quickly enough that the two ends' work bounds the drain (a busy box
        // that slowed the cloud's answers fourfold would still measure it so), and the gateway
        // builds the batch after next while two are on the wire.
        let shape = LinkShape(bytesPerSecond: 100_000, roundTrip: .milliseconds(2))
        try await SlowLinkSystem.run(shape: shape, cloudLines: Self.lines + ["max_batch_rows = 100"]) { system in
            // Written while the uplink is held down: they wait as one backlog.
            try await system.base.setUplink("gw-a", "sat", "unavailable")
            try await system.writeOrders(1_200)
            try await system.base.setUplink("gw-a", "sat", "auto")
            let syncing = Task { try await system.base.sync("gw-a", table: "orders") }
            // The opening batch (12 rows, too small to measure the throughput) and the full one
            // built beside it answered: the link is measured. Then it stalls.
            _ = try await eventually(within: .seconds(15)) {
                try await system.uplink()["link"]?["bytes_per_second_up"]?.int != nil
            }
            system.relay.hold()
            // Two batches held on the link, and a third built and recorded beside them.
            let seen = Mutex<[Int64]>([])
            let reached = try await eventually(within: .seconds(30)) {
                let inFlight = try await system.stats()["tables"]?["orders"]?["outbox_in_flight"]?.int ?? -1
                seen.withLock { if $0.last != inFlight { $0.append(inFlight) } }
                return inFlight == 300
            }
            let uplink = try await system.uplink()
            #expect(reached, "in flight: \(seen.withLock { $0 }), uplink: \(uplink)")
            system.relay.release()
            _ = try await syncing.value
            try await system.syncUntil("orders") { try await system.syncCounter("rows_accepted") == 1_200 }
            let sizes = try system.cloudBatchRows("orders")
            #expect(sizes.reduce(0, +) == 1_200 && sizes.allSatisfy { $0 <= 100 }, "\(sizes)")
            #expect(try await system.syncCounter("batches_resent") == 0)
        }
    }

    @Test func aWakeOnAnUnmeasuredLinkOpensWithASmallBatchAndBuildsTheNextWhileItFlies() async throws {
        // 300 wide orders a batch at most (~66 KB, ~2 s on the link), one at a time (the round
        // trip is short and nothing is measured yet): the wake opens with an eighth of that,
        // enough to measure the link, and records the next full batch while it goes; that one
        // goes when the first's answer comes.
        try await SlowLinkSystem.run(shape: Self.shape, cloudLines: Self.lines + ["max_batch_rows = 300"]) { system in
            try await system.writeOrders(600)
            async let synced = system.base.sync("gw-a", table: "orders")
            #expect(try await eventually(within: .seconds(30)) {
                try await system.stats()["tables"]?["orders"]?["outbox_in_flight"]?.int == 337
            })
            _ = try await synced
            try await system.syncUntil("orders") { try await system.syncCounter("rows_accepted") == 600 }
            #expect(try system.cloudBatchRows("orders") == [37, 300, 263])
            #expect(!system.uploadsOverlapped(), "the ready batch went before the first's answer")
            #expect(try await system.syncCounter("batches_resent") == 0)
            let uplink = try await system.uplink()
            #expect(uplink["failures"]?.int == 0, "\(uplink)")
            #expect((uplink["link"]?["bytes_per_second_up"]?.double ?? 0) > 0, "the opening batch measured nothing: \(uplink)")
        }
    }

    @Test func aBatchBuiltBeforeTheLinkWasMeasuredIsBuiltAgainWhenTooLargeForIt() async throws {
        // Once the opening batch measured the link, 1 s on it carries ~150 of these orders: the
        // 300-row batch built beside the opening one does not go; smaller ones do.
        let lines = Self.lines + ["max_batch_rows = 300", #"target_request_time = "1s""#]
        try await SlowLinkSystem.run(shape: Self.shape, cloudLines: lines) { system in
            try await system.writeOrders(600)
            try await system.syncUntil("orders") { try await system.syncCounter("rows_accepted") == 600 }
            let sizes = try system.cloudBatchRows("orders")
            #expect(sizes.first == 37 && sizes.dropFirst().allSatisfy { $0 < 300 } && sizes.reduce(0, +) == 600, "\(sizes)")
            #expect(try await system.syncCounter("batches_resent") == 0)
        }
    }

    /// A sync-now that comes while a wake's batches cross a long link asks for a pull after it:
    /// a batch of the wake built after it carries it, or a pull beside the wake's last batches
    /// serves it, instead of a pull a round trip after the last answer (or a second wake).
    @Test func aSyncNowWhileAWakeDrainsIsServedWithinIt() async throws {
        let shape = LinkShape(bytesPerSecond: 128_000, roundTrip: .milliseconds(200))
        // 2,000 rows of ~400 bytes pass `flush_bytes`: they wake the uplink on their own, and
        // their ~500 KB keep it busy for about four seconds, in batches of a second each.
        let lines = Self.lines + [#"target_request_time = "1s""#, "flush_bytes = 65536"]
        try await SlowLinkSystem.run(shape: shape, cloudLines: lines) { system in
            _ = try await system.base.sync("gw-a", table: "orders")
            let before = try await system.pullCounters()
            let upBefore = system.relay.counts.bytesUp
            try await system.writeOrders(2_000)
            // The sync-now once the size wake's rows are on the link.
            for _ in 0..<6_000 where system.relay.counts.bytesUp < upBefore + 40_000 {
                try await Task.sleep(for: .milliseconds(10))
            }
            guard system.relay.counts.bytesUp >= upBefore + 40_000 else {
                Issue.record("the size wake never sent its rows: \(system.relay.counts.bytesUp - upBefore) bytes up")
                return
            }
            let reply = try await system.base.sync("gw-a", table: "orders")
            #expect(reply.status == 200 && reply.body.contains(#""status":"synced""#), "\(reply.body)")
            #expect(try await system.syncCounter("rows_accepted") == 2_000)
            let counts = try await system.pullCounters() - before
            #expect(counts.cycles == 1, "\(counts): a second wake for the sync-now")
            // Four batches or more: the fourth, built once the first's answer (which brought
            // pages) was applied, carries the pull; fewer, and it goes beside the last.
            #expect(counts.riding + counts.beside >= 1 && counts.pulls == counts.beside, "\(counts)")
        }
    }

    /// After a cut, the resumed wake resends batches built without the pulls a sync-now asked
    /// for (only a wake's first batch, or one built once its answer was applied, carries
    /// them): the pull goes beside them, not a round trip after their answers.
    @Test func aSyncNowThroughACutIsServedBesideTheResentBatches() async throws {
        let shape = LinkShape(bytesPerSecond: 128_000, roundTrip: .milliseconds(200))
        let lines = Self.lines + [#"target_request_time = "1s""#, "max_batch_rows = 400"]
        try await SlowLinkSystem.run(shape: shape, cloudLines: lines) { system in
            _ = try await system.base.sync("gw-a", table: "orders")
            // Written while the uplink is held down: one backlog, and one wake for it.
            try await system.base.setUplink("gw-a", "sat", "unavailable")
            try await system.writeOrders(1_600)
            let before = try await system.pullCounters()
            let upBefore = system.relay.counts.bytesUp
            try await system.base.setUplink("gw-a", "sat", "auto")
            async let synced = system.base.sync("gw-a", table: "orders")
            // Late in the drain (~425 KB in four batches): every batch is built, and the first
            // answered (~190 KB and a round trip in), so that the cut is retried at once and
            // the sync-now answered by that retry; the last two still on the wire.
            try await system.cut(onceBytesUpReach: upBefore + 300_000)
            let reply = try await synced
            #expect(reply.status == 200 && reply.body.contains(#""status":"synced""#), "\(reply.status) \(reply.body)")
            let counts = try await system.pullCounters() - before
            #expect(try await system.syncCounter("rows_accepted") == 1_600)
            #expect(try await system.syncCounter("batches_resent") >= 1, "\(counts)")
            // The resumed wake's pull beside its resent batches, and none after them.
            #expect(counts.beside == 1 && counts.pulls == 1, "\(counts)")
        }
    }

    @Test func aWideRowBacklogDrainsOverALinkTooSlowForOneBatchInTheOldDeadline() async throws {
        try await SlowLinkSystem.run(shape: Self.shape, cloudLines: Self.lines + [#"target_request_time = "2s""#])
        { system in
            // 1,500 orders with 400 bytes of notes each: the first batch alone needs several
            // seconds on the link.
            try await system.writeOrders(1_500)
            try await system.syncUntil("orders") { try await system.syncCounter("rows_accepted") == 1_500 }
            let uplink = try await system.uplink()
            #expect(uplink["failures"]?.int == 0, "\(uplink)")
            #expect((uplink["link"]?["bytes_per_second_up"]?.double ?? 0) > 0)
        }
    }
}
