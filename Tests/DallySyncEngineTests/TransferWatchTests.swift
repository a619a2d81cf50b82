import AsyncHTTPClient
import DallyClocks
import DallyConfig
import DallyHTTPClientErrors
import Foundation
import NIOCore
import Synchronization
import Testing

@testable import DallySyncEngine

/// The watch's exchange with a sender that fails as AsyncHTTPClient's pool does when it hands
/// out a connection the peer closed a moment before: `I/O on closed channel`, before anything
/// went. That race cannot be lost on cue against a real server, so the sender stands in.
@Suite("TransferWatch")
struct TransferWatchTests {
    /// Fails its first `staleFirst` requests as a stale pooled connection does (or with
    /// `failure`), then answers `{}`; counts what it was asked.
    final class StalePool: RequestSender {
        let staleFirst: Int
        let failure: any Error & Sendable
        private let asked = Mutex(0)

        init(staleFirst: Int, failure: any Error & Sendable = ChannelError.ioOnClosedChannel) {
            self.staleFirst = staleFirst
            self.failure = failure
        }

        var requests: Int { asked.withLock { $0 } }

        func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
            let number = asked.withLock { count in
                count += 1
                return count
            }
            guard number > staleFirst else { throw failure }
            return HTTPClientResponse(status: .ok, body: .bytes(ByteBuffer(string: "{}")))
        }
    }

    static func watch() -> TransferWatch {
        TransferWatch(timings: LinkTimings(), model: LinkModel(), timer: TransferTimer(clock: ManualClock()))
    }

    static func exchange(_ watch: TransferWatch, on sender: StalePool) async throws(TransferWatch.Failure)
        -> TransferWatch.Answer
    {
        try await watch.exchange(
            HTTPClientRequest(url: "http://127.0.0.1:1/v1/batches"), body: [UInt8](repeating: 7, count: 100),
            on: sender, allowance: .seconds(30), quiet: .zero, maxAnswer: 1_024)
    }

    @Test func aRequestMetByClosedConnectionsGoesAgainOnAFreshOneAsNoFailure() async throws {
        let watch = Self.watch()
        // A cut closed three pooled connections; the fourth tried is fresh.
        let pool = StalePool(staleFirst: 3)
        let answer = try await Self.exchange(watch, on: pool)
        #expect(answer.response.status == .ok)
        #expect(String(buffer: answer.body) == "{}")
        #expect(pool.requests == 4)
        #expect(watch.model.estimate.staleConnections == 3)
        #expect(watch.model.estimate.wastedBytes == 0)
    }

    /// The `queued` notice comes before the request is handed to the sender, once per try
    /// (``ConnectionOrder`` waits for the first).
    @Test func theQueuedNoticeComesBeforeEachTryIsHandedToTheSender() async throws {
        let pool = StalePool(staleFirst: 2)
        let noticesBeforeEachTry = Mutex<[Int]>([])
        let notices = Mutex(0)
        let answer = try await Self.watch().exchange(
            HTTPClientRequest(url: "http://127.0.0.1:1/v1/chunks/x"), body: [UInt8](repeating: 7, count: 100),
            on: pool, allowance: .seconds(30), quiet: .zero, maxAnswer: 1_024,
            queued: {
                let count = notices.withLock { count in
                    count += 1
                    return count
                }
                // The sender has been asked one time fewer than the notice came.
                noticesBeforeEachTry.withLock { $0.append(count - pool.requests) }
            })
        #expect(answer.response.status == .ok)
        #expect(pool.requests == 3)
        #expect(noticesBeforeEachTry.withLock { $0 } == [1, 1, 1])
    }

    @Test func aPoolOfNothingButClosedConnectionsFailsTheRequestAfterItsRetries() async {
        let watch = Self.watch()
        let pool = StalePool(staleFirst: .max)
        await #expect(throws: TransferWatch.Failure.self) { try await Self.exchange(watch, on: pool) }
        #expect(pool.requests == 1 + StaleConnection.retries)
        do {
            _ = try await Self.exchange(watch, on: StalePool(staleFirst: .max))
        } catch {
            #expect(error.cloudError.cloudDidNotAnswer, "\(error.cloudError)")
        }
    }

    /// A probe or a notify stream (no body) met by closed connections goes again, and once more
    /// when refused; another failure is not retried, and a pool of nothing but closed
    /// connections ends the retries.
    @Test func aRequestWithoutABodyIsRetriedOnlyWhileItsConnectionWasStaleOrOnceRefused() async throws {
        final class Tries: Sendable {
            let count = Mutex(0)
            func next() -> Int { count.withLock { $0 += 1; return $0 } }
        }
        let tries = Tries()
        let stale = Tries()
        let answer = try await StaleConnection.retrying({ () async throws -> String in
            if tries.next() <= 2 { throw ChannelError.ioOnClosedChannel }
            return "answered"
        }, stale: { _ = stale.next() })
        #expect(answer == "answered")
        #expect(tries.count.withLock { $0 } == 3 && stale.count.withLock { $0 } == 2)

        #expect(await Self.attempts(failingWith: HTTPClientError.connectTimeout) == 1)
        #expect(await Self.attempts(failingWith: ChannelError.ioOnClosedChannel) == 1 + StaleConnection.retries)
        #expect(
            await Self.attempts(failingWith: IOError(errnoCode: ECONNREFUSED, reason: "connect"))
                == 1 + RefusedConnection.retries)
    }

    /// The tries made by a body-less request that always fails with `error`.
    static func attempts(failingWith error: any Error & Sendable) async -> Int {
        let made = Mutex(0)
        do {
            _ = try await StaleConnection.retrying({ () async throws -> String in
                made.withLock { $0 += 1 }
                throw error
            }, stale: {})
            Issue.record("a request that always fails answered")
        } catch {}
        return made.withLock { $0 }
    }

    /// A refusal may be another connection attempt's, begun while the cloud was down, which the
    /// pool passes to every request waiting: tried once more, then it stands.
    @Test func aRefusedConnectionIsTriedOnceMoreThenTheFailureStands() async throws {
        let refused = IOError(errnoCode: ECONNREFUSED, reason: "connect")
        let watch = Self.watch()
        let once = StalePool(staleFirst: 1, failure: refused)
        #expect(try await Self.exchange(watch, on: once).response.status == .ok)
        #expect(once.requests == 2)
        #expect(watch.model.estimate.staleConnections == 0)

        let always = StalePool(staleFirst: .max, failure: refused)
        do {
            _ = try await Self.exchange(watch, on: always)
            Issue.record("a cloud that refuses every connection answered")
        } catch {
            #expect(error.cloudError.cloudDidNotAnswer)
            #expect("\(error.cloudError)".contains("connection refused (errno \(ECONNREFUSED))"), "\(error.cloudError)")
        }
        #expect(always.requests == 1 + RefusedConnection.retries)

        // Another failure to connect is not retried at once: the backoff paces it.
        let timedOut = StalePool(staleFirst: .max, failure: HTTPClientError.connectTimeout)
        await #expect(throws: TransferWatch.Failure.self) { try await Self.exchange(watch, on: timedOut) }
        #expect(timedOut.requests == 1)
    }

    @Test func onlyAConnectionRefusedBeforeAnyOfTheBodyWentIsTriedAgain() {
        let refused = IOError(errnoCode: ECONNREFUSED, reason: "connect")
        #expect(RefusedConnection.isRefused(refused, handed: 0))
        #expect(!RefusedConnection.isRefused(refused, handed: 1))
        #expect(!RefusedConnection.isRefused(IOError(errnoCode: ECONNRESET, reason: "read"), handed: 0))
        #expect(!RefusedConnection.isRefused(ChannelError.ioOnClosedChannel, handed: 0))
    }

    @Test func onlyAConnectionClosedBeforeAnyOfTheBodyWentIsStale() {
        #expect(StaleConnection.isStale(ChannelError.ioOnClosedChannel, handed: 0))
        // Body bytes handed: a cut mid-transfer, which resumes where the cloud's copy ends
        // instead of going again whole.
        #expect(!StaleConnection.isStale(ChannelError.ioOnClosedChannel, handed: 1))
        #expect(!StaleConnection.isStale(ChannelError.eof, handed: 0))
        #expect(!StaleConnection.isStale(HTTPClientError.remoteConnectionClosed, handed: 0))
    }
}
