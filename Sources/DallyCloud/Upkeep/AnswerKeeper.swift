import DallySync
import Logging

/// Forgets stored batch answers older than `keep_answers`: the pass the cloud's
/// ``RecurringPass`` runs at start and then hourly.
///
/// A batch retried after its answer is forgotten is still applied at most once: the store
/// recognises, row by row, changes it already holds from that replica and batch.
struct AnswerKeeper: Sendable {
    let store: any CloudStore
    let keep: Duration
    /// The wall clock (ms since 1970) answers' ages are measured against.
    let now: @Sendable () -> Int64
    let logger: Logger

    func forgetOld() async throws {
        let forgotten = try await store.forgetAnswers(receivedBefore: now() - keep.milliseconds)
        if forgotten > 0 { logger.info("forgot old batch answers", metadata: ["count": "\(forgotten)"]) }
    }
}
