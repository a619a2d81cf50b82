import DallyScheduler
import Testing

/// One write in a trace: at `at` (ms since 1970) row `row` of `table` becomes dirty.
struct TraceWrite: Sendable {
    var at: Int64
    var table: String
    var row: Int
    var bytes: Int64 = 100
}

/// When each uplink is up. An uplink's state at `t` is its last change at or before `t`
/// (so a change at `t` already holds at `t`), else its initial state.
struct AvailabilitySchedule: Sendable {
    private var initial: [String: Bool]
    private var changes: [String: [(at: Int64, up: Bool)]] = [:]
    /// Every change time, sorted, to find the next one quickly.
    private var times: [Int64] = []

    /// Every uplink in `up` stays up for good; any other uplink is down until a change says otherwise.
    init(up: Set<String>) {
        initial = Dictionary(uniqueKeysWithValues: up.map { ($0, true) })
    }

    init(initial: [String: Bool], changes: [(at: Int64, uplink: String, up: Bool)]) {
        self.initial = initial
        for change in changes.sorted(by: { $0.at < $1.at }) {
            self.changes[change.uplink, default: []].append((change.at, change.up))
            times.append(change.at)
        }
    }

    func isUp(_ uplink: String, at t: Int64) -> Bool {
        guard let list = changes[uplink] else { return initial[uplink] ?? false }
        // The last change at or before t, by binary search.
        var low = 0
        var high = list.count
        while low < high {
            let mid = (low + high) / 2
            if list[mid].at <= t { low = mid + 1 } else { high = mid }
        }
        return low == 0 ? (initial[uplink] ?? false) : list[low - 1].up
    }

    func usable(at t: Int64, among uplinks: [UplinkRules]) -> Set<String> {
        Set(uplinks.map(\.name).filter { isUp($0, at: t) })
    }

    /// The first change strictly after `t`.
    func nextChange(after t: Int64) -> Int64? {
        var low = 0
        var high = times.count
        while low < high {
            let mid = (low + high) / 2
            if times[mid] <= t { low = mid + 1 } else { high = mid }
        }
        return low < times.count ? times[low] : nil
    }

    /// The first time at or after `t` when one of `uplinks` is up, if any.
    func firstUp(of uplinks: [String], atOrAfter t: Int64) -> Int64? {
        uplinks.compactMap { name -> Int64? in
            if isUp(name, at: t) { return t }
            return changes[name]?.first(where: { $0.at > t && $0.up })?.at
        }.min()
    }
}

/// One row sent in a cycle, with the deadline it had.
struct SentRow: Sendable, Equatable {
    let table: String
    let row: Int
    let firstDirtyAt: Int64
    let deadline: Int64
    let sentAt: Int64
    let uplink: String
    let networkClass: String
}

/// One wake the scheduler asked for, and what the cycle did with it.
struct WakeRecord: Sendable {
    let at: Int64
    let uplink: String
    let networkClass: String
    let reasons: Set<WakeReason>
    let sent: [SentRow]
    /// The tables the cycle sent (its uplink's upload scope), whether or not they had rows.
    let uploadScope: Set<String>
    let pulled: Set<String>
    let resent: Int
}

/// Replays writes and availability against a ``Scheduler`` the way the gateway runs it: build
/// the situation, decide, run the cycle a wake asks for (send every pending row of the uplink's
/// upload scope, resend the in-flight batches its class may carry, pull its pull scope), then
/// sleep until the decided time, the next write or the next availability change.
struct TraceSimulator {
    let scheduler: Scheduler
    private(set) var now: Int64
    /// Per table, row id → (first-dirty time, bytes). A write to a pending row keeps its first-dirty time.
    private(set) var pending: [String: [Int: (firstDirtyAt: Int64, bytes: Int64)]] = [:]
    var pulledAt: [String: Int64]
    var inFlight: [FlightTables] = []
    var urgentUploads: Set<String> = []
    var urgentPulls: Set<String> = []

    private(set) var wakes: [WakeRecord] = []
    /// Every decision taken, with its time (wakes and sleeps alike).
    private(set) var decisions: [(at: Int64, decision: Decision)] = []
    /// Every time `stranded` reported something: when, and what.
    private(set) var strandedReports: [(at: Int64, tables: [(table: String, deadline: Int64)])] = []

    /// `pulledAt` defaults to `start` for every table, so that with a long period pulls stay out of the way.
    init(scheduler: Scheduler, start: Int64, pulledAt: [String: Int64]? = nil) {
        self.scheduler = scheduler
        self.now = start
        self.pulledAt = pulledAt ?? Dictionary(uniqueKeysWithValues: scheduler.tables.map { ($0.name, start) })
    }

    var pendingRows: Int { pending.values.reduce(0) { $0 + $1.count } }
    var sent: [SentRow] { wakes.flatMap(\.sent) }

    mutating func write(_ write: TraceWrite) {
        let firstDirtyAt = pending[write.table]?[write.row]?.firstDirtyAt ?? write.at
        pending[write.table, default: [:]][write.row] = (firstDirtyAt, write.bytes)
    }

    func situation(usable: Set<String>) -> Situation {
        var uploads: [String: PendingUploads] = [:]
        for (table, rows) in pending where !rows.isEmpty {
            uploads[table] = PendingUploads(
                rows: Int64(rows.count), bytes: rows.values.reduce(0) { $0 + $1.bytes },
                oldestFirstDirtyAt: rows.values.map(\.firstDirtyAt).min())
        }
        return Situation(
            now: now, usable: usable, pending: uploads, pulledAt: pulledAt, urgentUploads: urgentUploads,
            urgentPulls: urgentPulls, inFlight: inFlight)
    }

    /// The cycle a wake starts, as the gateway runs it.
    mutating func apply(_ wake: Wake) {
        guard let uplink = scheduler.uplinks.first(where: { $0.name == wake.uplink }) else {
            Issue.record("woke unknown uplink \(wake.uplink)")
            return
        }
        let scope = scheduler.scope(of: uplink)
        var sent: [SentRow] = []
        for table in scheduler.tables where scope.uploads.contains(table.name) {
            for (row, state) in (pending[table.name] ?? [:]).sorted(by: { $0.key < $1.key }) {
                sent.append(
                    SentRow(
                        table: table.name, row: row, firstDirtyAt: state.firstDirtyAt,
                        deadline: state.firstDirtyAt + table.maxDelay, sentAt: now, uplink: uplink.name,
                        networkClass: uplink.networkClass))
            }
            pending[table.name] = nil
        }
        urgentUploads.subtract(scope.uploads)
        for table in scope.pulls { pulledAt[table] = now }
        urgentPulls.subtract(scope.pulls)
        let before = inFlight.count
        inFlight.removeAll {
            scheduler.allowedClasses(uploads: $0.uploads, pulls: $0.pulls).contains(uplink.networkClass)
        }
        wakes.append(
            WakeRecord(
                at: now, uplink: uplink.name, networkClass: uplink.networkClass, reasons: wake.reasons, sent: sent,
                uploadScope: scope.uploads, pulled: scope.pulls, resent: before - inFlight.count))
    }

    /// Runs until every write is applied and nothing is pending or in flight, or until nothing
    /// more can happen. A wake that changes nothing, a sleep that does not move time forward,
    /// or more than `maxSteps` decisions is an issue, not a hang.
    mutating func run(
        _ writes: [TraceWrite], availability: AvailabilitySchedule, maxSteps: Int = 200_000,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let writes = writes.enumerated().sorted { ($0.element.at, $0.offset) < ($1.element.at, $1.offset) }
            .map(\.element)
        var next = 0
        for _ in 0..<maxSteps {
            while next < writes.count, writes[next].at <= now {
                write(writes[next])
                next += 1
            }
            let usable = availability.usable(at: now, among: scheduler.uplinks)
            let situation = situation(usable: usable)
            let stranded = scheduler.stranded(situation)
            if !stranded.isEmpty { strandedReports.append((now, stranded)) }
            let decision = scheduler.decide(situation)
            decisions.append((now, decision))
            switch decision {
            case .wake(let wake):
                if !usable.contains(wake.uplink) {
                    Issue.record("woke \(wake.uplink) at \(now), which is not usable", sourceLocation: sourceLocation)
                }
                apply(wake)
                if self.situation(usable: usable) == situation {
                    Issue.record("wake of \(wake.uplink) at \(now) changed nothing", sourceLocation: sourceLocation)
                    return
                }
            case .sleep(let until):
                if let until, until <= now {
                    Issue.record("sleep until \(until), not after now \(now)", sourceLocation: sourceLocation)
                    return
                }
                if next == writes.count, pendingRows == 0, inFlight.isEmpty { return }
                let candidates = [until, next < writes.count ? writes[next].at : nil, availability.nextChange(after: now)]
                guard let wakeAt = candidates.compactMap({ $0 }).min() else { return }
                now = wakeAt
            }
        }
        Issue.record("no end after \(maxSteps) decisions (now \(now))", sourceLocation: sourceLocation)
    }
}
