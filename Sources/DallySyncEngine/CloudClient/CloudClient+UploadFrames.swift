import AsyncHTTPClient
import DallyCore

/// Resumable uploads in frames (PROTOCOL.md §6.1, §13.2.1), shared by chunks (``ChunkUpload``)
/// and batch bodies (``BatchUpload``): one frame's exchange, and the walk over a body's frames.
extension CloudClient {
    /// What one frame left.
    enum FrameAnswer: Sendable {
        /// The cloud holds the body up to `offset`: send the rest from there.
        case kept(offset: Int)
        /// The body was whole: the route's answer.
        case complete(JSONValue)
    }

    /// The most frames that may fail to move the cloud's offset forward before giving up.
    static let maxStalledFrames = 3

    /// Sends `frame`, bytes `offset…` of a body of `length` bytes coded as `encoding` (nil: as
    /// it is), as `request` with the upload headers added; an empty frame only asks where the
    /// cloud's copy ends. `smallAnswer` and `queued` as in
    /// ``sendRaw(_:body:timeout:quiet:maxAnswer:smallAnswer:tap:queued:)``.
    ///
    /// Only headers the cloud reads go: a frame's `Content-Type` would name what a body without
    /// one is taken to be anyway (`application/octet-stream`, RFC 9110 §8.3), and an offset of
    /// 0 is the default: 64 bytes a frame, a quarter of a second on a 2 kbit/s link.
    func send(
        frame: ArraySlice<UInt8>, as request: HTTPClientRequest, at offset: Int, length: Int, encoding: String?,
        maxAnswer: Int, smallAnswer: Bool = false, queued: (@Sendable () -> Void)? = nil
    ) async throws(CloudError) -> (FrameAnswer, Traffic) {
        var request = request
        request.headers.add(name: "Dally-Upload-Length", value: "\(length)")
        if offset > 0 { request.headers.add(name: "Dally-Upload-Offset", value: "\(offset)") }
        if let encoding { request.headers.add(name: "Dally-Upload-Encoding", value: encoding) }
        let (response, bytes, received) = try await send(
            request, body: Array(frame), timeout: link.requestTimeout, maxAnswer: maxAnswer, smallAnswer: smallAnswer,
            queued: queued)
        let traffic = Traffic(sentCompressed: frame.count, received: received)
        if response.status.code == 409, let document = try? JSONParser.parse(bytes),
            document["error"]?["code"] == .string(DallyError.Code.uploadOffset.rawValue),
            case .int(let held)? = document["offset"]
        {
            return (.kept(offset: Int(held)), traffic)
        }
        let document = try Self.json(bytes, status: response.status)
        guard response.status.code == 202 else { return (.complete(document), traffic) }
        guard case .int(let next)? = document["offset"] else { throw .badAnswer("a kept frame's answer has no offset") }
        return (.kept(offset: Int(next)), traffic)
    }

    /// Sends a body of `length` bytes from `offset` to its end, each frame (start, size) what
    /// the measured link carries in `target_request_time`, through `send`; the answer of the
    /// frame that completed it. A cloud that keeps losing its copy (another gateway's upload of
    /// the same chunk, memory pressure) is followed from where it says, ``maxStalledFrames``
    /// times at most; `name` names the body in that error.
    func sendFrames(
        length: Int, from offset: Int, name: String,
        _ send: (_ start: Int, _ size: Int) async throws(CloudError) -> (FrameAnswer, Traffic)
    ) async throws(CloudError) -> (JSONValue, Traffic) {
        var traffic = Traffic()
        var at = min(max(offset, 0), length - 1)
        var stalled = 0
        while true {
            let size = watch.model.frameBytes(whole: length - at, target: watch.timings.targetRequestTime)
            let (answer, exchanged) = try await send(at, size)
            traffic.add(exchanged)
            switch answer {
            case .complete(let document):
                return (document, traffic)
            case .kept(let next):
                if next <= at {
                    stalled += 1
                    guard stalled < Self.maxStalledFrames else {
                        throw .badAnswer("the cloud keeps refusing the frames of \(name) (at byte \(next))")
                    }
                }
                at = min(max(next, 0), length - 1)
            }
        }
    }
}
