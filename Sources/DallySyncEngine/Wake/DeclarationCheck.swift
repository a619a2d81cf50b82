import DallyCore
import DallySync
import Logging
import Synchronization

/// Compares the gateway's tables with the cloud's declarations (``TableDeclarations``), telling
/// the cloud its own in the same request (`POST /v1/tables`, for the cloud's `/stats`), and
/// holds back what the cloud would refuse (``DeclarationDifference``): the changes of a table
/// whose columns it lacks or types otherwise wait in the outbox (``Held/uploads``) instead of
/// crossing the link to be refused, and a table whose types differ, or whose scope the cloud
/// serves no pages for, is not pulled (``Held/pulls``) instead of values being dropped here or
/// every request failing.
///
/// The cloud is asked before the first wake or notify poll after start, after a page brought
/// a value a column here cannot hold (``suspect()``), and, while any table differs, at a
/// sync-now and every ``recheckInterval`` at a wake or poll that happens anyway: a gateway
/// whose tables agree with its cloud's asks once per start (no traffic of its own on a metered
/// link). Each node of a cloud reads its own configuration, and a rolling change reaches them
/// one at a time: an uplink that lists several nodes asks again when its requests moved to a
/// node whose answer it has not read. A cloud that predates `/v1/tables` holds nothing,
/// and is asked again only after a restart or at such a move.
///
/// ```swift
/// let held = try await check.checkIfDue(on: uplink)   // before a wake builds its scope
/// let uploads = scope.uploads.subtracting(held.uploads)
/// ```
final class DeclarationCheck: Sendable {
    /// What the cloud's last answer holds back.
    struct Held: Sendable, Equatable {
        /// Tables whose changes wait.
        var uploads: Set<String> = []
        /// Tables not pulled.
        var pulls: Set<String> = []
    }

    /// How often (ms) a wake asks again while a table differs.
    static var recheckInterval: Int64 { 600_000 }

    private struct State {
        var checkedAt: Int64?
        var asked = false
        /// A page brought a value a column here cannot hold: the cloud's declaration may have
        /// changed since it was read.
        var suspected = false
        var unsupported = false
        var differences: [String: DeclarationDifference] = [:]
        /// The cloud's Dally version, as its declarations told (nil before, or from an older one).
        var cloudVersion: String?
        /// The nodes whose answer is the one held: a wake on another asks it (an uplink that
        /// lists several nodes moved, or went back to its first).
        var nodes: Set<String> = []
    }

    /// The gateway's synced tables as it tells the cloud, and compares.
    private let declared: TableDeclarations
    private let now: @Sendable () -> Int64
    private let logger: Logger
    private let state = Mutex(State())
    /// The check under way: a wake and the notify loop that both find it due share one request.
    private let asking = Mutex<Task<Void, any Error>?>(nil)

    init(schemas: [TableSchema], now: @escaping @Sendable () -> Int64, logger: Logger) {
        declared = TableDeclarations(gateway: schemas)
        self.now = now
        self.logger = logger
    }

    /// What is held until the declarations agree, as the decision loop sees it: nothing while
    /// the cloud is to be asked again, so that a sync-now of a held table is not dropped before
    /// the wake that asks. A wake or poll uses what its own check returns.
    var heldForDecisions: Held { state.withLock { $0.asked ? Held() : Self.held(by: $0.differences) } }

    private static func held(by differences: [String: DeclarationDifference]) -> Held {
        Held(
            uploads: Set(differences.filter { $0.value.holdsUploads }.keys),
            pulls: Set(differences.filter { $0.value.holdsPulls }.keys))
    }

    /// The cloud's Dally version, as its last answer told; nil before one, or from a cloud
    /// too old to tell it.
    var cloudVersion: String? { state.withLock { $0.cloudVersion } }

    /// Per table whose declaration differs from the cloud's, as last read.
    var differences: [String: DeclarationDifference] { state.withLock { $0.differences } }

    /// Makes the next wake ask the cloud again while a table differs (a sync-now: an operator
    /// who fixed a declaration wants the table back without waiting). While all agree, a
    /// sync-now costs no request more.
    func askAgain() {
        state.withLock { state in
            if !state.differences.isEmpty { state.asked = true }
        }
    }

    /// Makes the next wake or poll ask the cloud again, holding what it holds meanwhile: a
    /// value came down that a column here cannot hold, so the cloud's declaration may have
    /// changed since it was read (a cloud re-declared on a new store while this gateway ran).
    func suspect() {
        state.withLock { $0.suspected = true }
    }

    /// Asks the cloud for its declarations when due (or waits for the check under way), and
    /// holds or releases tables by them; what the answer holds back.
    ///
    /// The answer's holds, not ``heldForDecisions``: a sync-now between this check and the caller's
    /// use of them (``askAgain()``) must not release, for this wake, the tables it just found
    /// held. (A wake once sent a held table's row so, to a cloud node lacking its column.)
    func checkIfDue(on uplink: Uplink) async throws -> Held {
        let nodes = uplink.client.nodes
        // The node the request would go to (a return to the first node included).
        return try await checkIfDue(node: nodes.urls.count > 1 ? nodes.current() : nil) {
            let (cloud, traffic, node) = try await uplink.client.declarations(told: self.declared)
            uplink.recordAnswer(traffic, now: self.now())
            return (cloud, node)
        }
    }

    /// ``checkIfDue(on:)`` with the cloud's answer from `ask`: its declarations (nil from a
    /// cloud that predates them) and the node that answered. `node` is the node a request
    /// would go to now, nil for an uplink of one node.
    func checkIfDue(
        node: String?, ask: @escaping @Sendable () async throws -> (TableDeclarations?, node: String)
    ) async throws -> Held {
        let task = asking.withLock { asking -> Task<Void, any Error>? in
            if let asking { return asking }
            let now = self.now()
            let due = state.withLock { state in
                if state.asked { return true }
                guard let checkedAt = state.checkedAt else { return true }
                if let node, !state.nodes.contains(node) { return true }
                if state.suspected { return !state.unsupported }
                return !state.unsupported && !state.differences.isEmpty && now - checkedAt >= Self.recheckInterval
            }
            guard due else { return nil }
            let task = Task {
                defer { self.asking.withLock { $0 = nil } }
                try await self.check(ask, now: now)
            }
            asking = task
            return task
        }
        try await task?.value
        return state.withLock { Self.held(by: $0.differences) }
    }

    private func check(_ ask: () async throws -> (TableDeclarations?, node: String), now: Int64) async throws {
        let (cloud, node) = try await ask()
        guard let cloud else {
            let first = state.withLock { state in
                defer { state = State(checkedAt: now, unsupported: true, nodes: Self.nodes(state, node, sameAnswer: state.unsupported)) }
                return !state.unsupported
            }
            if first {
                logger.info("the cloud does not list its tables (an older version); declarations are not compared")
            }
            return
        }
        let differences = DeclarationDifference.of(gateway: declared, cloud: cloud)
        let (before, versionBefore) = state.withLock { state in
            let same = !state.unsupported && state.checkedAt != nil && state.differences == differences
            defer {
                state = State(
                    checkedAt: now, differences: differences, cloudVersion: cloud.version,
                    nodes: Self.nodes(state, node, sameAnswer: same))
            }
            return (state.differences, state.cloudVersion)
        }
        if cloud.version != versionBefore {
            logger.info(
                "read the cloud's declarations", metadata: ["cloud_version": "\(cloud.version ?? "unknown")", "node": "\(node)"])
        }
        for (table, difference) in differences.sorted(by: { $0.key < $1.key }) where before[table] != difference {
            let metadata: Logger.Metadata = [
                "table": "\(table)", "differences": "\(difference.codes.joined(separator: ","))",
                "held": "\(difference.held.joined(separator: ","))", "detail": "\(difference.message)",
            ]
            if !difference.typesDiffer.isEmpty {
                logger.error("the cloud declares this table's columns with other types; the table does not sync", metadata: metadata)
            } else if !difference.scopeNotServed.isEmpty {
                logger.error("the cloud serves no scoped pages of this gateway's scope; the table is not pulled", metadata: metadata)
            } else {
                logger.warning("the cloud's declaration lacks what this gateway declares; the table's changes wait", metadata: metadata)
            }
        }
        for table in before.keys.sorted() where differences[table] == nil {
            logger.info("the cloud's declaration agrees with this gateway's again; the table syncs", metadata: ["table": "\(table)"])
        }
    }

    /// The nodes whose answer is held once `node` answered: those before too when it answered
    /// as they did.
    private static func nodes(_ state: State, _ node: String, sameAnswer: Bool) -> Set<String> {
        sameAnswer ? state.nodes.union([node]) : [node]
    }
}
