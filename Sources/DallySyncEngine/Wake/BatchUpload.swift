import DallyCompression
import DallyCore
import DallyObjects
import DallySync

/// One batch body's upload in resumable frames (PROTOCOL.md §6.1), on a link slow enough that
/// a body takes seconds: there a cut costs the part already sent, and resending it is paid
/// for again.
///
/// The body is the batch as it goes on the wire (compressed), named to the cloud by its
/// SHA-256, and the cloud keeps every byte of it as it arrives. A resend of the same bytes
/// first asks with an empty frame where the cloud's copy ends and goes on from there; a resend
/// compressed differently (a dictionary acknowledged meanwhile) has another hash and starts
/// anew. Each frame is what the measured link carries in `target_request_time`, so on a
/// link that carries the body in that time a frame is the whole body: one request, as before.
///
/// ```swift
/// if BatchUpload.pays(bytes: payload.count, on: client.watch.model) {
///     let (answer, traffic) = try await BatchUpload(payload: payload, coding: .zstd)
///         .send(resuming: batch.resent, over: client)
/// }
/// ```
struct BatchUpload: Sendable {
    let payload: [UInt8]
    let coding: ContentCoding
    let hash: ContentHash

    /// A body that takes at least this long on the measured link goes in frames: shorter ones
    /// lose little to a cut, and a fast link never pays the hash.
    static let framedAfter: Duration = .seconds(1)
    /// Before the link is measured (a gateway just started), a body at least this large goes
    /// in frames: the link may be a slow one, and this is the body a cut would cost.
    static let framedUnmeasured = 64 << 10

    init(payload: [UInt8], coding: ContentCoding) {
        self.payload = payload
        self.coding = coding
        hash = ContentHash.of(payload)
    }

    /// Whether a body of `bytes` goes in frames on the link `model` measured.
    static func pays(bytes: Int, on model: LinkModel) -> Bool {
        guard let rate = model.estimate.bytesPerSecondUp, rate > 0 else { return bytes >= framedUnmeasured }
        return Double(bytes) / rate >= framedAfter.seconds
    }

    /// How a send ended.
    enum Sent: Sendable {
        /// The cloud's answer to the batch, as a document.
        case answered(JSONValue, CloudClient.Traffic)
        /// The cloud had applied the batch already: its stored answer, and nothing was sent.
        case appliedBefore(BatchAnswer, CloudClient.Traffic)
    }

    /// Sends the body, from where the cloud's copy ends when `resuming` (the batch went before
    /// and may have been cut), and returns the cloud's answer to the batch.
    ///
    /// - Parameter appliedBefore: when resuming, the question whether the cloud applied the
    ///   batch already (``CloudClient/storedAnswer(to:)``), asked beside the empty frame that
    ///   asks where its copy ends: both are read-only, and on a long link one round trip
    ///   instead of two goes by before the rest of the body moves.
    func send(
        resuming: Bool, over client: CloudClient,
        appliedBefore: (@Sendable () async throws(CloudError) -> (BatchAnswer, CloudClient.Traffic)?)? = nil
    ) async throws(CloudError) -> Sent {
        var traffic = CloudClient.Traffic()
        var at = 0
        if resuming {
            let (held, asked): (CloudClient.FrameAnswer, CloudClient.Traffic)
            do {
                async let copyEnd = client.post(frame: payload[0..<0], of: self, at: 0)
                if let appliedBefore, let stored = try await appliedBefore() { return .appliedBefore(stored.0, stored.1) }
                (held, asked) = try await copyEnd
            } catch let error as CloudError {
                throw error
            } catch {
                throw .unreachable("asking where a batch body's copy ends: \(error)")
            }
            traffic.add(asked)
            if case .kept(let offset) = held, offset > 0, offset < payload.count {
                at = offset
                client.watch.model.resumed(offset)
            }
        }
        let (answer, sent) = try await client.sendFrames(length: payload.count, from: at, name: "batch body \(hash)") {
            (start, size) async throws(CloudError) in
            try await client.post(frame: payload[start..<(start + size)], of: self, at: start)
        }
        traffic.add(sent)
        return .answered(answer, traffic)
    }
}
