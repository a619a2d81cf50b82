import AsyncHTTPClient
import Foundation
import NIOCore
import Synchronization
import Testing

import DallyHTTPClientErrors

/// What an operator reads in `/stats` and the logs when the cloud could not be reached.
@Suite("TransportFailure")
struct TransportFailureTests {
    /// A real refused connection (nothing listens on port 1), as AsyncHTTPClient reports it:
    /// NIO's text read `connection reset (error set): Connection refused) (errno: 111)`. The
    /// client tries again until the request's deadline, then reports the last attempt's error.
    @Test func aRefusedConnectionIsNamedInTheSystemsWords() async throws {
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        defer { _ = client.shutdown() }
        var failure: (any Error)?
        do {
            _ = try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:1/v1/probe"), timeout: .seconds(1))
        } catch {
            failure = error
        }
        let text = try #require(failure.map(TransportFailure.describe))
        #expect(text == "connection refused (errno \(ECONNREFUSED))")
    }

    /// The refusal as the uplink's and the client library's pool gives it (no connection
    /// retries of its own) is the one ``RefusedConnection`` tries once more, and only once.
    @Test func aRealRefusalIsTriedOnceMoreThenThrown() async throws {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        defer { _ = client.shutdown() }
        let tries = Mutex(0)
        do {
            _ = try await RefusedConnection.retrying {
                tries.withLock { $0 += 1 }
                return try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:1/v1/probe"), timeout: .seconds(5))
            }
            Issue.record("port 1 answered")
        } catch {
            #expect(RefusedConnection.isRefused(error), "\(error)")
            #expect(!RefusedConnection.isRefused(error, handed: 1))
        }
        #expect(tries.withLock { $0 } == 1 + RefusedConnection.retries)
        // Another failure goes once.
        tries.withLock { $0 = 0 }
        await #expect(throws: HTTPClientError.self) {
            try await RefusedConnection.retrying { () async throws -> Int in
                tries.withLock { $0 += 1 }
                throw HTTPClientError.connectTimeout
            }
        }
        #expect(tries.withLock { $0 } == 1)
    }

    @Test func theClientsOwnErrorsReadAsSentences() {
        #expect(TransportFailure.describe(HTTPClientError.remoteConnectionClosed) == "remote connection closed")
        #expect(TransportFailure.describe(ChannelError.connectTimeout(.seconds(10))) == "connect timeout (10000 ms)")
        #expect(TransportFailure.describe(IOError(errnoCode: ENETUNREACH, reason: "connect")) == "network is unreachable (errno \(ENETUNREACH))")
    }
}
