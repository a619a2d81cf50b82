import DallyCore
import GRDB
import Synchronization

/// Runs write operations from many concurrent requests in shared transactions, local writes
/// first.
///
/// A durable commit costs one fsync whatever it holds. Rather than queue one transaction per
/// request, local writes that arrive while a commit is under way wait together and go in the
/// next transaction, each inside its own savepoint: one failing operation rolls back alone,
/// and every caller is answered only after the transaction holding its write has committed.
/// An operation alone in its transaction needs no savepoint and runs without one.
///
/// Sync work (building a batch, applying an answer or a page) waits in a lane of its own. Each
/// such operation runs alone in its own transaction, and only after the local writes that were
/// waiting when it could have started: a local write never waits for more than one sync
/// operation, which its caller keeps short (``SyncPiece``). Under a steady stream of local
/// writes the lanes alternate, so sync still moves.
///
/// At most one transaction is in flight; it is chained through GRDB's `asyncWrite`, so no
/// task or thread waits while nothing is queued.
final class GroupCommit: Sendable {
    typealias Operation = @Sendable (Database, inout CommitContext) throws -> Void

    /// Which queue an operation waits in.
    enum Lane: Sendable {
        /// A client's write: grouped with the other local writes waiting, answered first.
        case local
        /// Sync work: alone in its transaction, after the local writes already waiting.
        case sync(SyncStep)
    }

    private struct Pending: Sendable {
        let apply: Operation
        let finish: @Sendable ((any Error)?) -> Void
        let enqueuedAt: ContinuousClock.Instant
    }

    private struct State {
        var local: [Pending] = []
        var sync: [(pending: Pending, step: SyncStep)] = []
        var committing = false
        /// Whether the last transaction ran sync work: the next turn goes to local writes.
        var lastWasSync = false
    }

    private let writer: DatabasePool
    private let state = Mutex(State())
    private let maxOperationsPerCommit: Int
    private let synchronousFull: Bool
    /// Refuses local writes below the filesystem's free-space floor; nil: no floor.
    private let freeSpace: FreeSpaceFloor?
    /// Refuses local writes while the replica is at its size bound; nil: no bound.
    private let ceiling: ReplicaCeiling?
    private let begin: @Sendable () -> CommitContext
    private let committed: @Sendable (CommitContext) -> Void
    /// How long local writes waited for their commit, and how long sync work held the writer.
    let timings = WriterTimings()

    /// - Parameters:
    ///   - begin: the context a new transaction starts from (the committed sequence, the time).
    ///   - committed: called on the writer's queue after each successful commit, before callers
    ///     are answered.
    init(
        writer: DatabasePool,
        synchronousFull: Bool,
        maxOperationsPerCommit: Int = 512,
        freeSpace: FreeSpaceFloor? = nil,
        ceiling: ReplicaCeiling? = nil,
        begin: @escaping @Sendable () -> CommitContext,
        committed: @escaping @Sendable (CommitContext) -> Void
    ) {
        self.writer = writer
        self.freeSpace = freeSpace
        self.ceiling = ceiling
        self.maxOperationsPerCommit = maxOperationsPerCommit
        self.synchronousFull = synchronousFull
        self.begin = begin
        self.committed = committed
    }

    /// Runs `operation` in a transaction of `lane` and returns its result once committed.
    ///
    /// - Throws: the operation's own error (its savepoint rolled back, the rest of the group
    ///   unaffected), or the error that failed the whole transaction.
    func perform<T: Sendable>(
        lane: Lane = .local, _ operation: @escaping @Sendable (Database, inout CommitContext) throws -> T
    ) async throws -> T {
        // Local writes stop at the free-space floor; sync work goes on, as it drains the outbox.
        if case .local = lane { try requireRoom() }
        let box = ResultBox<T>()
        return try await withCheckedThrowingContinuation { continuation in
            let pending = Pending(
                apply: { db, context in box.value = try operation(db, &context) },
                finish: { error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else if let value = box.value {
                        continuation.resume(returning: value)
                    } else {
                        continuation.resume(throwing: StoreError("write finished without a result"))
                    }
                },
                enqueuedAt: ContinuousClock.now
            )
            let startCommit = state.withLock { state in
                switch lane {
                case .local: state.local.append(pending)
                case .sync(let step): state.sync.append((pending, step))
                }
                guard !state.committing else { return false }
                state.committing = true
                return true
            }
            if startCommit { commitNext() }
        }
    }

    /// How many operations wait in each lane (not counting the transaction under way).
    var queued: (local: Int, sync: Int) { state.withLock { ($0.local.count, $0.sync.count) } }

    /// The next transaction's operations: the waiting local writes, unless sync work waits and
    /// the last turn was theirs; then one sync operation.
    private func nextGroup() -> (group: [Pending], lane: Lane) {
        state.withLock { state in
            let syncTurn = !state.sync.isEmpty && (state.local.isEmpty || !state.lastWasSync)
            if syncTurn {
                let next = state.sync.removeFirst()
                state.lastWasSync = true
                return ([next.pending], .sync(next.step))
            }
            let group = Array(state.local.prefix(maxOperationsPerCommit))
            state.local.removeFirst(group.count)
            state.lastWasSync = false
            if group.isEmpty { state.committing = false }
            return (group, .local)
        }
    }

    private func commitNext() {
        let (group, lane) = nextGroup()
        guard !group.isEmpty else { return }
        let begin = self.begin
        // Sync work the protocol can redo needs no fsync of its own (see `SyncStep.isRedoable`):
        // the next local write's commit makes it durable too, as WAL commits land in order.
        let relaxed: Bool
        if synchronousFull, case .sync(let step) = lane { relaxed = step.isRedoable } else { relaxed = false }
        let started = ContinuousClock.now
        writer.asyncWriteWithoutTransaction { [self] db in
            let result: Result<([(any Error)?], CommitContext), any Error>
            do {
                if relaxed { try db.execute(sql: "PRAGMA synchronous = NORMAL") }
                defer { if relaxed { try? db.execute(sql: "PRAGMA synchronous = FULL") } }
                var outcome: ([(any Error)?], CommitContext)?
                try db.inTransaction {
                    outcome = try Self.run(group, in: db, from: begin())
                    return .commit
                }
                guard let outcome else { throw StoreError("a group commit ended without an outcome") }
                result = .success(outcome)
            } catch {
                result = .failure(error)
            }
            let done = ContinuousClock.now
            switch lane {
            case .local: for pending in group { timings.recordLocalWait(done - pending.enqueuedAt) }
            case .sync(let step): timings.recordSyncHold(done - started, step: step)
            }
            switch result {
            case .success(let (outcomes, context)):
                committed(context)
                for (pending, outcome) in zip(group, outcomes) { pending.finish(outcome) }
            case .failure(let error):
                for pending in group { pending.finish(Self.translate(error)) }
            }
            commitNext()
        }
    }

    /// A full disk (or the database's `max_page_count`) as the error a client can act on:
    /// `507 insufficient_storage`. The transaction or savepoint rolled back, so nothing of the
    /// write is saved, and everything committed before stays readable.
    static func translate(_ error: any Error) -> any Error {
        guard error is DiskFull || FullDisk.matches(error) else { return error }
        return DallyError(
            .insufficientStorage,
            "the gateway's disk is full: the write was not saved (reads go on). Free space in the data directory's filesystem, then write again")
    }

    /// Refuses a local write (`507 insufficient_storage`) below the filesystem's free-space
    /// floor or at the replica's size bound; sync work is never held to them.
    func requireRoom() throws(DallyError) {
        try freeSpace?.check()
        try ceiling?.check()
    }

    /// Runs each operation of `group` in its own savepoint; a failing one rolls back alone.
    ///
    /// An operation alone in its transaction runs without one: the transaction is its savepoint
    /// (its failure rolls the transaction back, and the error is its answer). A savepoint has
    /// SQLite copy each page it changes to a sub-journal first, a temporary file written page by
    /// page; a 5,000-row write, or an answer's pieces, changes a page or more for every row.
    private static func run(_ group: [Pending], in db: Database, from start: CommitContext) throws
        -> ([(any Error)?], CommitContext)
    {
        var context = start
        if group.count == 1, let only = group.first {
            try only.apply(db, &context)
            try record(lastSeq: context.lastSeq, from: start, db: db)
            return ([nil], context)
        }
        var outcomes: [(any Error)?] = []
        outcomes.reserveCapacity(group.count)
        for pending in group {
            let before = context
            var diskFull = false
            do {
                try db.inSavepoint {
                    do {
                        try pending.apply(db, &context)
                    } catch let error as DatabaseError where error.resultCode == .SQLITE_FULL {
                        diskFull = true
                        throw error
                    }
                    return .commit
                }
                outcomes.append(nil)
            } catch {
                // SQLite rolls the whole transaction back on a full disk: every operation of the
                // group fails with it, none is answered as saved.
                if diskFull { throw DiskFull() }
                context = before
                outcomes.append(translate(error))
            }
        }
        try record(lastSeq: context.lastSeq, from: start, db: db)
        return (outcomes, context)
    }

    private static func record(lastSeq: Int64, from start: CommitContext, db: Database) throws {
        guard lastSeq != start.lastSeq else { return }
        try db.cachedStatement(sql: "UPDATE dally_meta SET value = ? WHERE key = 'last_seq'").execute(arguments: [lastSeq])
    }
}

/// A group whose transaction SQLite rolled back for a full disk.
private struct DiskFull: Error {}

/// Carries an operation's result from the writer's queue to the caller; written once before
/// the commit completes and read once after, so the two never overlap.
private final class ResultBox<T>: @unchecked Sendable {
    var value: T?
}
