import DallyCore
import Logging
import ServiceLifecycle

/// Upkeep that runs every so often until the process shuts down: object collection on both
/// sides, forgetting old batch answers in the cloud.
///
/// It sleeps on the injected clock, so tests move time by hand. A pass that fails is logged
/// and the next one tries again: upkeep only ever deletes what nothing needs, so a pass
/// skipped costs disk space for a while, never data.
///
/// For example, a collection every ten minutes, the first ten minutes after start:
///
/// ```swift
/// RecurringPass("object collection", every: .seconds(600), clock: clock, logger: logger) {
///     try await collector.collect(now: now())
/// }
/// ```
public struct RecurringPass<C: Clock>: Service where C.Duration == Duration {
    let name: String
    let interval: Duration
    let atStart: Bool
    let clock: C
    let logger: Logger
    let pass: @Sendable () async throws -> Void

    /// - Parameters:
    ///   - name: what the pass does, for the log when it fails.
    ///   - atStart: run the first pass at once rather than one interval after start.
    public init(
        _ name: String, every interval: Duration, atStart: Bool = false, clock: C, logger: Logger,
        pass: @escaping @Sendable () async throws -> Void
    ) {
        self.name = name
        self.interval = interval
        self.atStart = atStart
        self.clock = clock
        self.logger = logger
        self.pass = pass
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            var first = true
            while !Task.isCancelled {
                if !(first && atStart) {
                    do { try await clock.sleep(for: interval) } catch { return }
                }
                first = false
                do {
                    try await pass()
                } catch {
                    logger.warning(
                        "upkeep pass failed; retrying next interval", metadata: ["pass": "\(name)", "error": "\(error)"])
                }
            }
        }
    }
}

/// How the service lifecycle names the pass in its start-up log (`compaction every 1h`), instead
/// of dumping its clock, logger and closure.
extension RecurringPass: CustomStringConvertible {
    public var description: String {
        "\(name) every \(DurationText.format(interval))\(atStart ? ", first at start" : "")"
    }
}
