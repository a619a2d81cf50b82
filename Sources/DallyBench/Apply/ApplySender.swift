import AsyncHTTPClient
import DallyCloud
import DallyCompression
import DallyCore
import DallySync
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// One gateway's sending loop and what it measured.
struct ApplySender: Sendable {
    let gateway: Int
    let http: HTTPClient
    let url: String
    let level: Int
    var samples = Samples()
    var prepare = Samples()
    var tally = ApplyTally()
    var rows = 0
    var rawBytes = 0
    var sentBytes = 0

    init(gateway: Int, http: HTTPClient, url: String, level: Int) {
        (self.gateway, self.http, self.url, self.level) = (gateway, http, url, level)
    }

    func run(_ feed: ApplyOverHTTP.Feed) async throws -> ApplySender {
        var sender = self
        let clock = ContinuousClock()
        switch feed {
        case .prepared(let batches):
            for batch in batches { _ = try await sender.send(batch) }
        case .live(var maker, let count):
            for _ in 0..<count {
                let start = clock.now
                let batch = maker.next()
                let raw = batch.encode()
                let body = try Compressor.compress(raw, coding: .zstd, level: level)
                sender.prepare.add(clock.now - start)
                maker.record(try await sender.send(.init(body: body, rawBytes: raw.count, rows: batch.rowCount, outline: batch.outline)))
            }
        }
        return sender
    }

    private mutating func send(_ batch: ApplyOverHTTP.Prepared) async throws -> BatchAnswer {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "Content-Encoding", value: "zstd")
        request.headers.add(name: "Accept-Encoding", value: "zstd")
        let credentials = "\(BenchConfigs.gatewayID(gateway)):\(BenchConfigs.secret(gateway))"
        request.headers.add(name: "Authorization", value: "Basic " + Data(credentials.utf8).base64EncodedString())
        request.body = .bytes(ByteBuffer(bytes: batch.body))
        let clock = ContinuousClock()
        let start = clock.now
        let response = try await http.execute(request, timeout: .seconds(300))
        let body = try await response.body.collect(upTo: 1 << 30)
        samples.add(clock.now - start)
        let coding = response.headers.first(name: "Content-Encoding").flatMap { ContentCoding(header: $0) } ?? .identity
        let bytes = try body.withUnsafeReadableBytes { raw in
            try Decompressor.decompress(raw, coding: coding, maxOutput: 1 << 30)
        }
        guard response.status == .ok else {
            throw BenchError(
                "POST /v1/batches: \(response.status.code) \(String(decoding: bytes.prefix(500), as: UTF8.self))")
        }
        let answer = try BatchAnswer.decode(try JSONParser.parse(bytes), outline: batch.outline)
        tally.add(answer)
        (rows, rawBytes, sentBytes) = (rows + batch.rows, rawBytes + batch.rawBytes, sentBytes + batch.body.count)
        return answer
    }
}
