import GRDB
import Synchronization

/// Runs write operations from many concurrent requests in shared transactions.
///
/// A durable commit costs one fsync whatever it holds. Rather than queue one transaction per
/// request, operations that arrive while a commit is under way wait together and go in the
/// next transaction, each inside its own savepoint: one failing operation rolls back alone,
/// and every caller is answered only after the transaction holding its write has committed.
///
/// At most one transaction is in flight; it is chained through GRDB's `asyncWrite`, so no
/// task or thread waits while nothing is queued.
final class GroupCommit: Sendable {
    typealias Operation = @Sendable (Database, inout CommitContext) throws -> Void

    private struct Pending: Sendable {
        let apply: Operation
        let finish: @Sendable ((any Error)?) -> Void
    }

    private struct State {
        var queue: [Pending] = []
        var committing = false
    }

    private let writer: DatabasePool
    private let state = Mutex(State())
    private let maxOperationsPerCommit: Int
    private let begin: @Sendable () -> CommitContext
    private let committed: @Sendable (CommitContext) -> Void

    /// - Parameters:
    ///   - begin: the context a new transaction starts from (the committed sequence, the time).
    ///   - committed: called on the writer's queue after each successful commit, before callers
    ///     are answered.
    init(
        writer: DatabasePool,
        maxOperationsPerCommit: Int = 512,
        begin: @escaping @Sendable () -> CommitContext,
        committed: @escaping @Sendable (CommitContext) -> Void
    ) {
        self.writer = writer
        self.maxOperationsPerCommit = maxOperationsPerCommit
        self.begin = begin
        self.committed = committed
    }

    /// Runs `operation` in the next group transaction and returns its result once committed.
    ///
    /// - Throws: the operation's own error (its savepoint rolled back, the rest of the group
    ///   unaffected), or the error that failed the whole transaction.
    func perform<T: Sendable>(_ operation: @escaping @Sendable (Database, inout CommitContext) throws -> T) async throws -> T {
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
                }
            )
            let startCommit = state.withLock { state in
                state.queue.append(pending)
                guard !state.committing else { return false }
                state.committing = true
                return true
            }
            if startCommit { commitNext() }
        }
    }

    private func commitNext() {
        let group: [Pending] = state.withLock { state in
            let group = Array(state.queue.prefix(maxOperationsPerCommit))
            state.queue.removeFirst(group.count)
            if group.isEmpty { state.committing = false }
            return group
        }
        guard !group.isEmpty else { return }
        let begin = self.begin
        writer.asyncWrite(
            { db -> ([(any Error)?], CommitContext) in
                var context = begin()
                let startSeq = context.lastSeq
                var outcomes: [(any Error)?] = []
                outcomes.reserveCapacity(group.count)
                for pending in group {
                    let before = context
                    do {
                        try db.inSavepoint {
                            try pending.apply(db, &context)
                            return .commit
                        }
                        outcomes.append(nil)
                    } catch {
                        context = before
                        outcomes.append(error)
                    }
                }
                if context.lastSeq != startSeq {
                    try db.execute(
                        sql: "UPDATE dally_meta SET value = ? WHERE key = 'last_seq'", arguments: [context.lastSeq])
                }
                return (outcomes, context)
            },
            completion: { [self] _, result in
                switch result {
                case .success(let (outcomes, context)):
                    committed(context)
                    for (pending, outcome) in zip(group, outcomes) { pending.finish(outcome) }
                case .failure(let error):
                    for pending in group { pending.finish(error) }
                }
                commitNext()
            }
        )
    }
}

/// Carries an operation's result from the writer's queue to the caller; written once before
/// the commit completes and read once after, so the two never overlap.
private final class ResultBox<T>: @unchecked Sendable {
    var value: T?
}
