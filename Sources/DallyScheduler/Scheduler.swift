/// Decides when the gateway wakes its radio and which uplink it uses: the delay-tolerant
/// scheduler, as a pure function of a ``Situation``.
///
/// Every pending change has a deadline: the time its row first became dirty plus its table's
/// `max_delay`. The scheduler sleeps until the earliest deadline, then wakes the cheapest
/// available uplink the due table allows, and the cycle that follows sends everything pending
/// that may use that uplink's class (the radio is awake anyway) and pulls every table that may
/// come down over it. Waking at the earliest deadline and taking everything pending is the
/// greedy algorithm for interval stabbing: while every class is up, no schedule meets the
/// deadlines with fewer wake-ups of each class. Across classes it is not a global optimum by
/// design: a due table goes over its cheapest allowed class, even when a costlier class that
/// must wake soon anyway could have carried it too (metered bytes cost more than a wake-up).
///
/// It also wakes early for a table whose pending bytes pass ``flushBytes``, for a sync-now
/// (which overrides the delay, never the networks), for a download period that ran out or a
/// notification, for a batch in flight that must be resent (on any uplink all its tables
/// allow, so with the same id over another class when its own uplink went down), and at once
/// for changes any available `eager` uplink may carry.
///
/// Times are milliseconds since 1970, not a `Clock`'s instants, because deadlines outlive the
/// process: a change written before a restart keeps its deadline. The service that runs the
/// scheduler sleeps on its injected `Clock` until the time decided here.
public struct Scheduler: Sendable {
    /// The configured tables and uplinks, and the size bound.
    public let tables: [TableRules]
    public let uplinks: [UplinkRules]
    /// A table whose pending changes pass this many bytes goes at once.
    public let flushBytes: Int64

    private let tablesByName: [String: TableRules]

    /// - Parameter uplinks: in any order; the scheduler prefers lower ``UplinkRules/cost``,
    ///   then the order given.
    public init(tables: [TableRules], uplinks: [UplinkRules], flushBytes: Int64) {
        self.tables = tables.filter { !$0.localOnly }
        self.uplinks = uplinks.enumerated().sorted { ($0.element.cost, $0.offset) < ($1.element.cost, $1.offset) }
            .map(\.element)
        self.flushBytes = flushBytes
        self.tablesByName = Dictionary(self.tables.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The rules of a synced table; nil for a local-only or unknown one.
    public func rules(of table: String) -> TableRules? { tablesByName[table] }

    // MARK: - Scope

    /// The tables an uplink may carry up and bring down: those whose policies name its class.
    public func scope(of uplink: UplinkRules) -> (uploads: Set<String>, pulls: Set<String>) {
        (
            Set(tables.filter { $0.uploadNetworks.contains(uplink.networkClass) }.map(\.name)),
            Set(tables.filter { $0.downloadNetworks.contains(uplink.networkClass) }.map(\.name))
        )
    }

    /// The tables a batch carrying `uploads` over `uplink` asks down: those `uplink` may bring
    /// down that may also come down over every class the uploads allow. A batch whose answer
    /// is lost is resent unchanged, and the cloud answers a resend from its record, downstream
    /// pages included; so that the batch can be resent over any class its uploads allow, it
    /// asks down nothing that one of those classes forbids. The tables left out are pulled
    /// on their own in the same wake.
    public func pulls(riding uploads: [String], on uplink: UplinkRules) -> Set<String> {
        var classes = Set(uplinks.map(\.networkClass))
        for name in uploads { classes.formIntersection(tablesByName[name]?.uploadNetworks ?? []) }
        return Set(
            tables.filter { $0.downloadNetworks.contains(uplink.networkClass) && classes.isSubset(of: $0.downloadNetworks) }
                .map(\.name))
    }

    /// Tables whose download period ran out, or that a sync-now or a notification asked for.
    public func duePulls(_ situation: Situation) -> Set<String> {
        Set(
            tables.filter { table in
                // No class may bring it down: an on-demand object stream, fetched when read.
                guard !table.downloadNetworks.isEmpty else { return false }
                return situation.urgentPulls.contains(table.name)
                    || (situation.pulledAt[table.name].map { $0 + table.period <= situation.now } ?? true)
            }.map(\.name))
    }

    /// The classes a batch in flight may travel over: those every table it carries allows.
    public func allowedClasses(uploads: [String], pulls: [String]) -> Set<String> {
        var allowed = Set(uplinks.map(\.networkClass))
        for name in uploads { allowed.formIntersection(tablesByName[name]?.uploadNetworks ?? []) }
        for name in pulls { allowed.formIntersection(tablesByName[name]?.downloadNetworks ?? []) }
        return allowed
    }

    /// The deadline of a table's oldest pending change, if it has one.
    public func deadline(of table: String, in situation: Situation) -> Int64? {
        guard let rules = tablesByName[table], let pending = situation.pending[table], pending.rows > 0,
            let oldest = pending.oldestFirstDirtyAt
        else { return nil }
        return oldest + rules.maxDelay
    }

    // MARK: - Decision

    /// What to do at `situation.now`: wake an uplink, or sleep until a time (nil: until
    /// something changes — a write, a sync-now, an uplink coming up).
    public func decide(_ situation: Situation) -> Decision {
        var best: (rank: Int, uplink: UplinkRules)?
        var reasons: Set<WakeReason> = []
        for item in dueItems(situation) {
            guard let candidate = cheapestUsable(item.classes, situation, only: item.uplink) else { continue }
            if let current = best, current.rank < candidate.rank { continue }
            if best?.rank != candidate.rank {
                best = candidate
                reasons = []
            }
            reasons.insert(item.reason)
        }
        if let best { return .wake(Wake(uplink: best.uplink.name, reasons: reasons)) }
        return .sleep(until: nextTime(situation))
    }

    /// Tables whose deadline has passed while no uplink their policy allows is usable: each
    /// such change waits, and the service counts a miss once per table and deadline.
    public func stranded(_ situation: Situation) -> [(table: String, deadline: Int64)] {
        tables.compactMap { table in
            guard let deadline = deadline(of: table.name, in: situation), deadline <= situation.now,
                cheapestUsable(table.uploadNetworks, situation) == nil
            else { return nil }
            return (table.name, deadline)
        }
    }

    /// Something due now, and the classes (or the one uplink) that may serve it.
    struct DueItem {
        let classes: Set<String>
        let reason: WakeReason
        var uplink: String?
    }

    func dueItems(_ situation: Situation) -> [DueItem] {
        var items: [DueItem] = []
        let now = situation.now
        let duePulls = duePulls(situation)
        for table in tables {
            if let pending = situation.pending[table.name], pending.rows > 0 {
                if situation.urgentUploads.contains(table.name) {
                    items.append(DueItem(classes: table.uploadNetworks, reason: .syncNow))
                } else if let deadline = deadline(of: table.name, in: situation), deadline <= now {
                    items.append(DueItem(classes: table.uploadNetworks, reason: .deadline))
                } else if pending.bytes >= flushBytes {
                    items.append(DueItem(classes: table.uploadNetworks, reason: .size))
                }
                for uplink in uplinks where uplink.eager && table.uploadNetworks.contains(uplink.networkClass) {
                    items.append(DueItem(classes: [uplink.networkClass], reason: .eager, uplink: uplink.name))
                }
            }
            if situation.urgentPulls.contains(table.name) {
                items.append(DueItem(classes: table.downloadNetworks, reason: .pullRequested))
            } else if duePulls.contains(table.name) {
                items.append(DueItem(classes: table.downloadNetworks, reason: .period))
            }
        }
        for flight in situation.inFlight {
            items.append(DueItem(classes: allowedClasses(uploads: flight.uploads, pulls: flight.pulls), reason: .resend))
        }
        return items
    }

    /// The cheapest usable uplink of one of `classes` (or `only` that uplink), with its rank
    /// in cost order.
    func cheapestUsable(_ classes: Set<String>, _ situation: Situation, only: String? = nil)
        -> (rank: Int, uplink: UplinkRules)?
    {
        for (rank, uplink) in uplinks.enumerated()
        where classes.contains(uplink.networkClass) && situation.usable.contains(uplink.name)
            && (only == nil || only == uplink.name)
        {
            return (rank, uplink)
        }
        return nil
    }

    /// When something next falls due: a deadline, a download period, or the end of a backoff
    /// that keeps a due item waiting.
    func nextTime(_ situation: Situation) -> Int64? {
        var next: Int64?
        func consider(_ time: Int64) {
            guard time > situation.now else { return }
            next = min(next ?? time, time)
        }
        for table in tables {
            if let deadline = deadline(of: table.name, in: situation) { consider(deadline) }
            if let pulled = situation.pulledAt[table.name], !table.downloadNetworks.isEmpty {
                consider(pulled + table.period)
            }
        }
        let waiting = dueItems(situation)
        for (name, retryAt) in situation.backingOff {
            guard let uplink = uplinks.first(where: { $0.name == name }),
                waiting.contains(where: { $0.classes.contains(uplink.networkClass) && ($0.uplink ?? name) == name })
            else { continue }
            consider(retryAt)
        }
        return next
    }
}
