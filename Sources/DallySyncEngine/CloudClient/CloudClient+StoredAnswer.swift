import DallyCore
import DallySync
import DallyStore

/// The cheap question before a cut batch's body goes again: did the cloud apply it already?
extension CloudClient {
    /// The smallest batch body worth asking about: below it, resending costs less than a
    /// round trip's worth of headers.
    static var askBeforeResending: Int { 2_048 }

    /// The cloud's answer to `batch` when it applied it already (`GET /v1/batches/{id}`), with
    /// no downstream page; nil when it holds none, or holds one for a different body (then
    /// the resend is refused with `batch_reused`, as before).
    func storedAnswer(to batch: OutgoingBatch) async throws(CloudError) -> (BatchAnswer?, Traffic) {
        guard let (document, received) = try await lookUp("/v1/batches/\(batch.batchID)") else {
            return (nil, Traffic())
        }
        let traffic = Traffic(received: received)
        guard case .string(let hex)? = document["fingerprint"], UInt64(hex, radix: 16) == Fingerprint.of(batch.body),
            let results = document["results"]
        else { return (nil, traffic) }
        do {
            let decoded = try BatchAnswer.decodeResults(results, outline: batch.outline)
            return (BatchAnswer(batchID: batch.batchID, replayed: true, results: decoded, changes: []), traffic)
        } catch {
            throw .badAnswer("stored answer to batch \(batch.batchID): \(error)")
        }
    }
}
