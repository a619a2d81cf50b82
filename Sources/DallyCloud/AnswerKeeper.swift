import DallySync
import Logging
import ServiceLifecycle

/// Forgets stored batch answers older than `keep_answers`, once at start and then hourly.
///
/// A batch retried after its answer is forgotten is still applied at most once: the store
/// recognises, row by row, changes it already holds from that replica and batch.
struct AnswerKeeper<C: Clock>: Service where C.Duration == Duration {
    let store: any CloudStore
    let keep: Duration
    let every: Duration
    /// What it sleeps on, and the wall clock (ms since 1970) it compares answers' ages with.
    let clock: C
    let now: @Sendable () -> Int64
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                let cutoff = now() - keep.milliseconds
                do {
                    let forgotten = try await store.forgetAnswers(receivedBefore: cutoff)
                    if forgotten > 0 { logger.info("forgot old batch answers", metadata: ["count": "\(forgotten)"]) }
                } catch {
                    logger.warning("could not forget old batch answers", metadata: ["error": "\(error)"])
                }
                do { try await clock.sleep(for: every) } catch { return }
            }
        }
    }
}
