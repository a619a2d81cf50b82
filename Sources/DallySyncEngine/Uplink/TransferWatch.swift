import AsyncHTTPClient
import DallyConfig
import DallyHTTPClientErrors
import NIOCore

/// Runs one HTTP exchange with the cloud while a watchdog on the injected clock checks its
/// progress, and feeds the link model from it: a transfer fails because it stopped moving
/// (``TransferProgress``), never because a slow link needs longer than a fixed total.
///
/// The body streams in slices (``BodyFrames``) and the answer is read as it arrives, so both
/// directions count as progress. A transfer cut by the watchdog or by the network, or whose body
/// the cloud gave up waiting for, has its handed body bytes counted as wasted on the uplink.
struct TransferWatch: Sendable {
    let timings: LinkTimings
    let model: LinkModel
    let timer: TransferTimer

    /// What came back: the answer's head and its body, as it was on the wire.
    struct Answer: Sendable {
        var response: HTTPClientResponse
        var body: ByteBuffer

        var parts: (HTTPClientResponse, ByteBuffer) { (response, body) }
    }

    /// Why a watched transfer ended without an answer.
    enum Failure: Error, Sendable {
        /// The watchdog cut it; why.
        case stalled(String)
        /// The answer was larger than allowed.
        case answerTooLarge(Int)
        /// The client or the network failed.
        case transport(String)
        /// The connection was closed before the request went (``StaleConnection``): sent again
        /// on a fresh one, up to ``StaleConnection/retries`` times.
        case staleConnection
        /// The connection was refused before the request went (``RefusedConnection``): tried
        /// once more at once; a second refusal is the failure.
        case refused(String)

        /// As the sync engine reports it: the cloud could not be reached (retried with backoff).
        var cloudError: CloudError {
            switch self {
            case .stalled(let reason): .unreachable("transfer stalled: \(reason)")
            case .answerTooLarge(let limit): .badAnswer("the answer is larger than \(limit) bytes")
            case .transport(let reason): .unreachable(reason)
            case .staleConnection: .unreachable("every connection tried had closed before the request went")
            case .refused(let reason): .unreachable(reason)
            }
        }
    }

    /// Sends `request` with `body` (nil: none) and reads the answer, at most `maxAnswer` bytes.
    ///
    /// - Parameters:
    ///   - allowance: the fixed part of the bound (`request_timeout`).
    ///   - quiet: how long the answer may rightly take once the body is sent (a long-poll).
    ///   - tap: given the answer's head and each piece of its body as they arrive.
    ///   - queued: called as the request is handed to the HTTP client, where it takes its
    ///     place in the queue for the uplink's connections (again if it is sent again).
    ///   - http: what sends it; a request that meets a connection closed before it went
    ///     (``StaleConnection``) is sent again on a fresh one, and counts as neither a failure
    ///     nor waste; one refused a connection (``RefusedConnection``) is tried once more.
    func exchange(
        _ request: HTTPClientRequest, body: [UInt8]?, on http: some RequestSender, allowance: Duration,
        quiet: Duration, maxAnswer: Int, tap: AnswerTap? = nil, queued: (@Sendable () -> Void)? = nil
    ) async throws(Failure) -> Answer {
        var (stale, refused) = (0, 0)
        while true {
            switch await attempt(
                request, body: body, on: http, allowance: allowance, quiet: quiet, maxAnswer: maxAnswer, tap: tap,
                queued: queued)
            {
            case .success(let answer):
                return answer
            case .failure(.staleConnection) where stale < StaleConnection.retries:
                stale += 1
                model.staleConnection()
            case .failure(.refused) where refused < RefusedConnection.retries:
                refused += 1
            case .failure(let failure):
                throw failure
            }
        }
    }

    /// One try of ``exchange(_:body:on:allowance:quiet:maxAnswer:tap:)`` on the connection the
    /// sender picks.
    private func attempt(
        _ request: HTTPClientRequest, body: [UInt8]?, on http: some RequestSender, allowance: Duration,
        quiet: Duration, maxAnswer: Int, tap: AnswerTap?, queued: (@Sendable () -> Void)?
    ) async -> Result<Answer, Failure> {
        let timer = self.timer
        let progress = TransferProgress(bodyBytes: body?.count ?? 0, start: timer.elapsed())
        var request = request
        if let body {
            request.body = .stream(
                BodyFrames(body: ByteBuffer(bytes: body), progress: progress, elapsed: timer.elapsed),
                length: .known(Int64(body.count)))
        }
        let rules = TransferProgress.Rules(
            timings: timings, allowance: allowance, quiet: quiet, drainRate: model.drainRate)
        let check: Duration = max(.milliseconds(10), min(timings.idleTimeout / 4, .seconds(1)))
        let watched = request
        let model = self.model
        // A body that measures the link counts as sharing it with any other going up meanwhile.
        let measured = (body?.count ?? 0) >= LinkModel.measuringBody ? model.uploadBegan(at: progress.start) : nil
        let outcome: Result<(Answer, Duration, Double), Failure> = await withTaskGroup(
            of: Result<(Answer, Duration, Double), Failure>?.self
        ) { group in
            group.addTask {
                var going = measured
                defer { if let going { _ = model.uploadEnded(going, at: timer.elapsed()) } }
                do {
                    queued?()
                    let response = try await http.send(watched)
                    let head = timer.elapsed()
                    let sharing = going.map { model.uploadEnded($0, at: head) } ?? 1
                    going = nil
                    progress.headArrived(at: head)
                    tap?.head(response)
                    var collected = ByteBuffer()
                    for try await piece in response.body {
                        progress.received(piece.readableBytes, at: timer.elapsed())
                        guard collected.readableBytes + piece.readableBytes <= maxAnswer else {
                            return .failure(.answerTooLarge(maxAnswer))
                        }
                        collected.writeImmutableBuffer(piece)
                        tap?.append(piece)
                    }
                    return .success((Answer(response: response, body: collected), head, sharing))
                } catch {
                    if StaleConnection.isStale(error, handed: progress.handed) { return .failure(.staleConnection) }
                    if RefusedConnection.isRefused(error, handed: progress.handed) {
                        return .failure(.refused(TransportFailure.describe(error)))
                    }
                    return .failure(.transport(TransportFailure.describe(error)))
                }
            }
            group.addTask {
                while true {
                    do {
                        try await timer.sleep(check)
                    } catch {
                        return nil
                    }
                    if let reason = progress.stall(at: timer.elapsed(), rules: rules) {
                        return .failure(.stalled(reason))
                    }
                }
            }
            // The exchange's end, or the watchdog's verdict, whichever comes first; a watchdog
            // whose sleep was cancelled (the caller is stopping) says nothing.
            var first: Result<(Answer, Duration, Double), Failure>?
            while first == nil, let next = await group.next() { first = next }
            group.cancelAll()
            return first ?? .failure(.transport("cancelled"))
        }
        switch outcome {
        case .success(let (answer, head, sharing)):
            // A body the cloud stopped waiting for (`408 body_timeout`: the link stalled) failed
            // as a cut one does, with an answer: its handed bytes count as wasted alike.
            if answer.response.status == .requestTimeout { model.wasted(progress.handed) }
            // A long-poll's answer comes when the cloud has news, not a round trip later: its
            // time says nothing of the link.
            if quiet == .zero {
                var sample = progress.sample(endedAt: timer.elapsed(), headAt: head)
                sample.sharing = sharing
                model.record(sample)
            }
            return .success(answer)
        case .failure(let failure):
            model.wasted(progress.handed)
            return .failure(failure)
        }
    }
}
