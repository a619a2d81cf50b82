import AsyncHTTPClient
import DallyCloud
import DallyCompression
import DallyCore
import DallySync
import DallyTestSupport
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// The HTTP parts of `dally-bench apply`: a real cloud on 127.0.0.1 (its own services in a
/// service group, port 0, a fresh data directory) receiving `POST /v1/batches` as gateways
/// send them: zstd bodies, HTTP Basic `gateway-id:secret`, one batch in flight per gateway.
struct ApplyOverHTTP {
    let setup: ApplySetup

    /// A batch ready to send: its zstd body, and what it carries.
    struct Prepared: Sendable {
        var body: [UInt8]
        var rawBytes: Int
        var rows: Int
        /// The row ids, which name the answer's runs of accepted rows.
        var outline: BatchOutline
    }

    /// What one gateway sends: bodies built beforehand, or batches built as answers come back
    /// (when updates need base versions only the answers give).
    enum Feed: Sendable {
        case prepared([Prepared])
        case live(OrderBatches, batches: Int)
    }

    /// One gateway sending the same batches as the store part, one at a time.
    func sequential(_ batches: [BatchRequest]) async throws -> ApplyResult {
        let prepared = try batches.map { try prepare($0) }
        return try await measure(name: "http-1", label: "http x1 gateway", feeds: [.prepared(prepared)])
    }

    /// `setup.gateways` gateways at once, the batches split among them.
    func concurrent() async throws -> ApplyResult {
        var feeds: [Feed] = []
        for n in 0..<setup.gateways {
            let count = setup.batches / setup.gateways + (n < setup.batches % setup.gateways ? 1 : 0)
            var maker = setup.maker(n)
            if setup.updates > 0 {
                feeds.append(.live(maker, batches: count))
            } else {
                feeds.append(.prepared(try (0..<count).map { _ in try prepare(maker.next()) }))
            }
        }
        let n = setup.gateways
        return try await measure(name: "http-\(n)", label: "http x\(n) gateways", feeds: feeds)
    }

    private func prepare(_ batch: BatchRequest) throws -> Prepared {
        let raw = batch.encode()
        return Prepared(
            body: try Compressor.compress(raw, coding: .zstd, level: setup.level), rawBytes: raw.count,
            rows: batch.rowCount, outline: batch.outline)
    }

    /// Starts a cloud that knows the feeds' gateways, runs every feed at once, stops the cloud.
    private func measure(name: String, label: String, feeds: [Feed]) async throws -> ApplyResult {
        let config = try BenchConfigs.cloud(
            directory: setup.root + "/" + name, gateways: feeds.count, columns: setup.columns,
            synchronousFull: setup.synchronousFull, maxRowsPerBatch: setup.rowsPerBatch, logLevel: setup.logLevel)
        let cloud = try Cloud(config: config, logger: Logger(label: "dally.cloud"))
        let services: ServiceRunner
        do {
            services = try await ServiceRunner.bench(servers: 1) { report in
                cloud.services(port: 0) { port in await report(0, port) }
            }
        } catch {
            try? cloud.store.close()
            throw error
        }
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = max(8, 2 * feeds.count)
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let url = "http://127.0.0.1:\(services.ports[0])/v1/batches"
        let outcome: Result<ApplyResult, any Error>
        do {
            let clock = ContinuousClock()
            let start = clock.now
            let senders = try await withThrowingTaskGroup(of: ApplySender.self) { group in
                for (n, feed) in feeds.enumerated() {
                    group.addTask { try await ApplySender(gateway: n, http: http, url: url, level: setup.level).run(feed) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let wall = clock.now - start
            outcome = .success(
                result(name: name, label: label, senders: senders, wall: wall, concurrent: feeds.count > 1))
        } catch {
            outcome = .failure(error)
        }
        // Every step runs whatever the others did; the first error is the one reported.
        var failure: (any Error)?
        do { try await http.shutdown() } catch { failure = failure ?? error }
        do { try await services.stop() } catch { failure = failure ?? error }
        do { try cloud.store.close() } catch { failure = failure ?? error }
        let result = try outcome.get()
        if let failure { throw failure }
        return result
    }

    private func result(name: String, label: String, senders: [ApplySender], wall: Duration, concurrent: Bool)
        -> ApplyResult
    {
        var samples = Samples()
        var tally = ApplyTally()
        var (rows, raw, sent, prepare) = (0, 0, 0, Samples())
        for sender in senders {
            samples.merge(sender.samples)
            tally.add(sender.tally)
            (rows, raw, sent) = (rows + sender.rows, raw + sender.rawBytes, sent + sender.sentBytes)
            prepare.merge(sender.prepare)
        }
        let batches = max(samples.count, 1)
        var notes = "\(tally.text); body \(raw / batches / 1024) KiB -> zstd \(sent / batches / 1024) KiB"
        if prepare.count > 0 {
            notes += "; batch built live, \(BenchOutput.figure(prepare.total / Double(prepare.count))) ms each"
        }
        // One at a time, the sum of round trips is the time; at once, the wall clock is.
        let seconds = concurrent ? wall.benchSeconds : samples.total / 1000
        return ApplyResult(
            name: name, label: label, rows: rows, seconds: seconds, perBatch: samples, notes: notes,
            inOrder: !concurrent)
    }
}
