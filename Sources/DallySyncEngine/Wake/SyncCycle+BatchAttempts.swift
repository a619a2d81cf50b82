import DallyStore
import DallySync

/// One batch's attempts: sent with its body compressed (ahead of its turn, or now), a resend
/// first asked about, each attempt counted on its uplink.
extension SyncCycle {
    /// A batch body being compressed ahead of its turn (``CloudClient/compress(batch:dictionaries:)``).
    typealias Compressing = Task<Result<CloudClient.CompressedBatch, CloudError>, Never>

    /// Sends `batch` (its body compressed already by `compressed`, if given), counting the
    /// attempt; how it ended.
    func attempt(
        _ batch: OutgoingBatch, on uplink: Uplink, compressed: Compressing?
    ) async -> Result<(BatchAnswer, CloudClient.Traffic), CloudError> {
        noteAttempt(batch, on: uplink)
        do throws(CloudError) {
            let body: CloudClient.CompressedBatch
            if let compressed {
                body = try await compressed.value.get()
            } else {
                body = try uplink.client.compress(batch: batch.body, dictionaries: dictionaries.book)
            }
            return .success(try await send(batch, body: body, on: uplink))
        } catch {
            return .failure(error)
        }
    }

    /// Posts `batch`; a batch sent before, whose body is worth a round trip, is first asked
    /// about (`GET /v1/batches/{id}`, beside the question where a framed body's copy ends):
    /// when the cloud applied it already, its stored results are the answer and the body is
    /// not sent again.
    private func send(_ batch: OutgoingBatch, body: CloudClient.CompressedBatch, on uplink: Uplink) async throws(CloudError)
        -> (BatchAnswer, CloudClient.Traffic)
    {
        guard batch.resent, batch.body.count >= CloudClient.askBeforeResending else {
            return try await uplink.client.post(batch: body, outline: batch.outline, resuming: batch.resent)
        }
        let logger = self.logger
        let now = self.now
        let appliedBefore: @Sendable () async throws(CloudError) -> (BatchAnswer, CloudClient.Traffic)? = {
            () async throws(CloudError) -> (BatchAnswer, CloudClient.Traffic)? in
            let (stored, asked) = try await uplink.client.storedAnswer(to: batch)
            guard let stored else {
                uplink.recordAnswer(asked, now: now())
                return nil
            }
            logger.info(
                "the cloud had applied a batch whose answer was lost; not sending it again",
                metadata: ["batch": "\(batch.batchID)", "bytes": "\(batch.body.count)", "uplink": "\(uplink.name)"])
            return (stored, asked)
        }
        return try await uplink.client.post(batch: body, outline: batch.outline, resuming: true, appliedBefore: appliedBefore)
    }

    /// Counts a resend as a retry on the same uplink, or as a re-route from another.
    private func noteAttempt(_ batch: OutgoingBatch, on uplink: Uplink) {
        let previous = counters.withLock { counters in
            defer { counters.lastUplink[batch.batchID] = uplink.name }
            return counters.lastUplink[batch.batchID]
        }
        guard batch.resent else { return }
        if let previous, previous != uplink.name {
            uplink.count { $0.rerouted += 1 }
            logger.info(
                "resending a batch in flight over another uplink",
                metadata: ["batch": "\(batch.batchID)", "from": "\(previous)", "to": "\(uplink.name)"])
        } else {
            uplink.count { $0.retries += 1 }
        }
    }
}
