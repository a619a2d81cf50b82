import Synchronization

/// Bounds how long a caller waits for one database operation, even one that never ends.
///
/// Right after PostgreSQL restarts, a request on a cloud node was seen to wait forever on its
/// pooled connection (2 runs in 5 of the restart test; the database showed no query waiting),
/// which kept the node from stopping and left its gateway to give up on the transfer. Task
/// cancellation alone cannot end such a wait: a task group waits for a child that ignores it.
/// So the operation runs in a task of its own and the caller waits on a continuation that
/// whichever comes first resumes: the operation's result, the deadline, or `giveUp` finding a
/// reason to stop waiting (asked every ``checkInterval``), each of the last two also
/// cancelling the operation.
///
/// What the wait was (PostgresNIO 1.33, traced 2026-11-28): a statement written to a connection
/// whose channel had already closed and dropped its handlers; PostgresNIO writes it with no
/// promise, so the failed write fails nothing and the statement's own promise is never
/// completed. A connection that has closed under an operation is therefore a reason to give up
/// at once (``PostgresAccess``), rather than after the whole limit.
///
/// ```swift
/// let rows = try await OperationDeadline(limit: .seconds(20)).run(onTimeout: { unavailable() }) {
///     try await readRows()
/// }
/// ```
struct OperationDeadline<C: Clock>: Sendable where C.Duration == Duration {
    let limit: Duration
    /// How often `giveUp` is asked while an operation runs.
    let checkInterval: Duration
    /// What the limit and the checks are measured on: `ContinuousClock` in service, a manual
    /// clock in tests, which then move time instead of waiting for it.
    let clock: C

    init(limit: Duration, checkInterval: Duration = .milliseconds(250), clock: C) {
        self.limit = limit
        self.checkInterval = checkInterval
        self.clock = clock
    }

    func run<T: Sendable>(
        onTimeout: @escaping @Sendable () -> any Error,
        giveUp: (@Sendable () -> (any Error)?)? = nil,
        _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let race = Race<T>()
        let limit = limit
        let checkInterval = checkInterval
        let clock = clock
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                race.wait(continuation)
                let work = Task {
                    let result: Result<T, any Error>
                    do { result = .success(try await operation()) } catch { result = .failure(error) }
                    race.finish(with: result)
                }
                let timer = Task {
                    let deadline = clock.now.advanced(by: limit)
                    while clock.now < deadline {
                        let step = giveUp == nil ? limit : min(checkInterval, clock.now.duration(to: deadline))
                        try? await clock.sleep(for: step)
                        guard !Task.isCancelled else { return }
                        if let reason = giveUp?() {
                            race.finish(with: .failure(reason))
                            return
                        }
                    }
                    race.finish(with: .failure(onTimeout()))
                }
                race.start(work: work, timer: timer)
            }
        } onCancel: {
            // The caller's cancellation reaches the operation; its result, or its
            // CancellationError, resumes the caller.
            race.cancelWork()
        }
    }

    /// The caller's continuation, resumed once by whichever ends first, and the two tasks
    /// that race: the loser is cancelled.
    private final class Race<T: Sendable>: Sendable {
        private struct State {
            var waiting: CheckedContinuation<T, any Error>?
            var work: Task<Void, Never>?
            var timer: Task<Void, Never>?
            var finished = false
            var cancelled = false
        }

        private let state = Mutex(State())

        func wait(_ continuation: CheckedContinuation<T, any Error>) {
            state.withLock { $0.waiting = continuation }
        }

        func start(work: Task<Void, Never>, timer: Task<Void, Never>) {
            let (finished, cancelled) = state.withLock { state in
                state.work = work
                state.timer = timer
                return (state.finished, state.cancelled)
            }
            // The operation ended, or the caller was cancelled, before the tasks were stored.
            if finished { timer.cancel() }
            if finished || cancelled { work.cancel() }
        }

        func finish(with result: Result<T, any Error>) {
            let (waiting, work, timer) = state.withLock { state in
                defer {
                    state.waiting = nil
                    state.finished = true
                }
                return (state.waiting, state.work, state.timer)
            }
            guard let waiting else { return }
            work?.cancel()
            timer?.cancel()
            waiting.resume(with: result)
        }

        func cancelWork() {
            state.withLock { state in
                state.cancelled = true
                return state.work
            }?.cancel()
        }
    }
}

extension OperationDeadline where C == ContinuousClock {
    /// A deadline on the continuous clock, as every store operation has.
    init(limit: Duration, checkInterval: Duration = .milliseconds(250)) {
        self.init(limit: limit, checkInterval: checkInterval, clock: ContinuousClock())
    }
}
