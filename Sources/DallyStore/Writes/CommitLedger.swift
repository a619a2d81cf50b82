import Synchronization

/// What the replica has committed: the last local sequence number, each table's latest
/// sequence and counts, and who wants to hear of new commits.
///
/// Read by any thread; changed only by ``GroupCommit`` after a transaction commits.
final class CommitLedger: Sendable {
    struct State {
        var lastSeq: Int64
        var latestByTable: [String: Int64]
        var counts: [String: TableCounts]
        var observers: [@Sendable (ReplicaStore.CommitNotice) -> Void] = []
    }

    private let state: Mutex<State>

    init(_ initial: State) {
        state = Mutex(initial)
    }

    var lastSeq: Int64 { state.withLock { $0.lastSeq } }
    var latestByTable: [String: Int64] { state.withLock { $0.latestByTable } }
    var counts: [String: TableCounts] { state.withLock { $0.counts } }

    func observe(_ observer: @escaping @Sendable (ReplicaStore.CommitNotice) -> Void) {
        state.withLock { $0.observers.append(observer) }
    }

    /// Records a committed transaction, then tells the observers.
    func record(_ context: CommitContext) {
        let observers = state.withLock { state in
            state.lastSeq = context.lastSeq
            for (table, seq) in context.touched { state.latestByTable[table] = seq }
            for (table, delta) in context.deltas { state.counts[table, default: TableCounts()].add(delta) }
            return state.observers
        }
        guard !context.touched.isEmpty else { return }
        let notice = ReplicaStore.CommitNotice(
            tables: context.touched, lastSeq: context.lastSeq, outbox: context.outbox, notHeld: context.notHeld)
        for observer in observers { observer(notice) }
    }
}
