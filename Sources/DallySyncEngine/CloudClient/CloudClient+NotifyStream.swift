import AsyncHTTPClient
import DallyCore
import DallyHTTPClientErrors
import DallySync
import NIOCore
import Synchronization

extension CloudClient {
    /// What to do after a line of the notify stream.
    enum StreamVerdict: Sendable {
        /// Keep reading.
        case goOn
        /// Close the stream: the gateway's cursors or what it takes inline changed, and a new
        /// request says so.
        case reopen
    }

    /// `GET /v1/notify?…&stream=1` (PROTOCOL.md §7.3.1): holds one request open while the
    /// cloud writes a line per notification, and hands each to `each` with its size on the
    /// wire, until the cloud ends the stream (after `wait`), `each` asks to reopen it, or the
    /// stream falls silent for longer than a healthy one can (`wait` and `request_timeout`).
    ///
    /// A cloud that does not stream answers `400 bad_query` naming `stream`
    /// (``CloudError/refused(status:code:message:)``); the caller then polls.
    ///
    /// - Throws: ``CloudError`` when the stream fails; what `each` throws, as it is.
    func notifyStream(
        versions: TableVersions, replica: String, scopes: TableScopes = TableScopes(), inline: [String] = [],
        wait: Duration, each: (NotifyAnswer, Int) async throws -> StreamVerdict
    ) async throws {
        let query = Self.notifyQuery(versions: versions, replica: replica, scopes: scopes, inline: inline, wait: wait)
        var request = HTTPClientRequest(url: baseURL + "/v1/notify?" + query + "&stream=1")
        request.method = .GET
        if let authorization { request.headers.add(name: "Authorization", value: authorization) }
        let (lines, sink) = AsyncThrowingStream<(NotifyAnswer, Int), any Error>.makeStream()
        let timer = watch.timer
        let silence = wait + link.requestTimeout
        let lastByte = LastByte(timer.elapsed())
        let watched = request
        let http = self.http
        let maxLine = maxAnswerBytes
        let client = self
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    do {
                        let response = try await StaleConnection.retrying(
                            { try await http.send(watched) }, stale: client.watch.model.staleConnection)
                        lastByte.set(timer.elapsed())
                        guard response.status == .ok else {
                            if Self.nodeDown(response.status) { client.nodeFailed(watched.url) }
                            let body = try await response.body.collect(upTo: 1 << 20)
                            _ = try Self.json(Array(buffer: body), status: response.status)
                            throw CloudError.badAnswer("status \(response.status.code) without an error")
                        }
                        var splitter = StreamLines(maxLine: maxLine)
                        var ended = false
                        for try await piece in response.body {
                            lastByte.set(timer.elapsed())
                            for line in try splitter.append(piece) {
                                let answer = try NotifyAnswer.decode(JSONParser.parse(line))
                                // Only the stream's last line names no table.
                                ended = answer.versions.isEmpty
                                sink.yield((answer, line.count + 1))
                            }
                        }
                        guard ended else { throw CloudError.unreachable("the notify stream was cut before its end") }
                        sink.finish()
                    } catch {
                        sink.finish(throwing: error)
                    }
                }
                group.addTask {
                    let check = max(.milliseconds(10), min(silence / 8, .seconds(1)))
                    while true {
                        try await timer.sleep(check)
                        let quiet = timer.elapsed() - lastByte.get()
                        if quiet > silence {
                            sink.finish(throwing: CloudError.unreachable("the notify stream was silent for \(quiet)"))
                            return
                        }
                    }
                }
                defer { group.cancelAll() }
                for try await (answer, size) in lines {
                    let verdict: StreamVerdict
                    do {
                        verdict = try await each(answer, size)
                    } catch {
                        throw TakerFailed(error: error)
                    }
                    if verdict == .reopen { break }
                }
            }
        } catch let failed as TakerFailed {
            throw failed.error
        } catch let error as CloudError {
            if case .unreachable = error { nodeFailed(request.url) }
            throw error
        } catch let error as StreamLines.TooLong {
            throw CloudError.badAnswer("a notify stream line is longer than \(error.limit) bytes")
        } catch let error as JSONParseError {
            throw CloudError.badAnswer("notify stream: \(error)")
        } catch let error as DallyError {
            throw CloudError.badAnswer("notify stream: \(error.message)")
        } catch is CancellationError {
            return
        } catch {
            nodeFailed(request.url)
            throw CloudError.unreachable(TransportFailure.describe(error))
        }
    }

    /// What the caller's `each` threw, carried out of the stream unchanged.
    private struct TakerFailed: Error {
        let error: any Error
    }

    /// When the stream last moved a byte, for its watchdog.
    private final class LastByte: Sendable {
        private let time: Mutex<Duration>
        init(_ time: Duration) { self.time = Mutex(time) }
        func set(_ time: Duration) { self.time.withLock { $0 = time } }
        func get() -> Duration { time.withLock { $0 } }
    }
}
