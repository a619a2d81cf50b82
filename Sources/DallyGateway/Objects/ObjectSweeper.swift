import DallyStore
import Logging
import ServiceLifecycle

/// Runs object GC every `objects.gc_interval` until the gateway shuts down.
///
/// A failed pass is logged and the next one tries again: GC only ever deletes what nothing
/// needs, so a pass skipped costs disk space for a while, never data.
struct ObjectSweeper<C: Clock>: Service where C.Duration == Duration {
    let objects: GatewayObjects
    let clock: C
    let now: @Sendable () -> Int64
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do { try await clock.sleep(for: objects.settings.gcInterval) } catch { return }
                do {
                    let report = try await objects.collect(now: now())
                    if report != ObjectCollector.Report() {
                        logger.info(
                            "object GC",
                            metadata: [
                                "objects": "\(report.objects)", "chunks": "\(report.chunks)", "bytes": "\(report.chunkBytes)",
                            ])
                    }
                } catch {
                    logger.error("object GC failed; retrying next interval", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}
