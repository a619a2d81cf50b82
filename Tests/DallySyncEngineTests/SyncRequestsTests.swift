import DallyStore
import Testing

@testable import DallySyncEngine

/// Sync-now requests: recorded, served by the cycles that carry them, answered when the
/// decision loop has nothing left to do.
@Suite("SyncRequests")
struct SyncRequestsTests {
    /// Yields until `requests` holds uploads for `table` (the ask records asynchronously).
    func asked(_ requests: SyncRequests, _ table: String) async {
        for _ in 0..<100_000 where !requests.urgent.uploads.contains(table) { await Task.yield() }
    }

    @Test func aServedRequestIsAnsweredSyncedWithWhatCyclesDid() async {
        let requests = SyncRequests()
        async let outcome = requests.ask(table: "t", uploads: ["t"], pulls: ["t"], asked: {})
        await asked(requests, "t")
        var report = SyncReport()
        report.sent = 3
        requests.served(uploads: ["t"], pulls: ["t"], report: report)
        requests.answer(asked: requests.prune { _ in true }, backingOff: false, lastError: nil)
        guard case .synced(let done) = await outcome else { Issue.record("not synced"); return }
        #expect(done.sent == 3)
    }

    /// A decision made from what the loop saw before a request came does not answer it: the
    /// next one, after the loop looks again, does.
    @Test func aRequestMadeAfterTheLoopLookedWaitsForItsNextDecision() async {
        let requests = SyncRequests()
        let before = requests.prune { _ in true }
        async let outcome = requests.ask(table: "t", uploads: ["t"], pulls: [], asked: {})
        await asked(requests, "t")
        requests.answer(asked: before, backingOff: true, lastError: "cloud unreachable: refused")
        #expect(requests.waiting == 1)
        let now = requests.prune { _ in true }
        #expect(now.uploads == ["t"])
        var report = SyncReport()
        report.sent = 1
        requests.served(uploads: ["t"], pulls: [], report: report)
        requests.answer(asked: requests.prune { _ in true }, backingOff: false, lastError: nil)
        guard case .synced(let done) = await outcome else { Issue.record("not synced"); return }
        #expect(done.sent == 1)
    }

    @Test func anUnservedRequestIsQueuedWithWhy() async {
        let requests = SyncRequests()
        async let offline = requests.ask(table: "t", uploads: ["t"], pulls: [], asked: {})
        await asked(requests, "t")
        requests.answer(asked: requests.prune { _ in true }, backingOff: true, lastError: "cloud unreachable: refused")
        guard case .queued(let why) = await offline else { Issue.record("not queued"); return }
        #expect(why.contains("cloud unreachable"))

        async let noUplink = requests.ask(table: "u", uploads: ["u"], pulls: [], asked: {})
        await asked(requests, "u")
        requests.answer(asked: requests.prune { _ in true }, backingOff: false, lastError: nil)
        guard case .queued(let reason) = await noUplink else { Issue.record("not queued"); return }
        #expect(reason.contains("no uplink"))
    }

    @Test func pruningDropsUploadsWithNothingToSend() async {
        let requests = SyncRequests()
        async let outcome = requests.ask(table: "t", uploads: ["t", "t#objects"], pulls: ["t"], asked: {})
        await asked(requests, "t")
        let left = requests.prune { $0 == "t" }
        #expect(left.uploads == ["t"] && left.pulls == ["t"])
        requests.stop()
        guard case .queued = await outcome else { Issue.record("not queued"); return }
    }

    /// The uplinks a request asks to try at once are told to the decision loop once, when it
    /// next looks (after any cycle under way), not ended by the request itself.
    @Test func theUplinksToRetryAreToldOnce() async {
        let requests = SyncRequests()
        async let first = requests.ask(table: "t", uploads: ["t"], pulls: [], retrying: ["wifi"], asked: {})
        await asked(requests, "t")
        async let second = requests.ask(table: "u", uploads: ["u"], pulls: [], retrying: ["lte"], asked: {})
        await asked(requests, "u")
        #expect(requests.takeRetries() == ["wifi", "lte"])
        #expect(requests.takeRetries().isEmpty)
        requests.stop()
        _ = await (first, second)
        _ = await requests.ask(table: "t", uploads: ["t"], pulls: [], retrying: ["wifi"], asked: {})
        #expect(requests.takeRetries().isEmpty)
    }

    @Test func afterStopARequestIsQueuedAtOnce() async {
        let requests = SyncRequests()
        requests.stop()
        var pokes = 0
        guard case .queued(let why) = await requests.ask(table: "t", uploads: ["t"], pulls: [], asked: { pokes += 1 })
        else { Issue.record("not queued"); return }
        #expect(why.contains("stopping") && pokes == 0)
    }
}
