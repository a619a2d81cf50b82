import AsyncHTTPClient
import DallyCompression
import DallyConfig
import DallyCore
import DallySync
import Foundation
import NIOCore
import NIOHTTP1

/// The gateway's side of the sync protocol over HTTP, through one uplink: batches up
/// (compressed), the notify long-poll and the availability probe, authenticated as the
/// configured gateway.
struct CloudClient: Sendable {
    /// Bytes a request put on the wire and took off it, bodies only.
    struct Traffic: Sendable {
        var sentRaw = 0
        var sentCompressed = 0
        var received = 0
        /// Answer bytes not fetched again: kept from a cut attempt, the rest asked by `Range`.
        var resumedDown = 0

        mutating func add(_ other: Traffic) {
            sentRaw += other.sentRaw
            sentCompressed += other.sentCompressed
            received += other.received
            resumedDown += other.resumedDown
        }
    }

    let http: HTTPClient
    let link: CloudLink
    /// Watches each exchange's progress and measures the link from it.
    let watch: TransferWatch
    /// The uplink's cloud nodes (its own `url`, or `[cloud]`'s) and the one in use.
    let nodes: CloudNodes
    /// The zstd level each table's large bodies go at (``LevelTrials``).
    let levels: LevelTrials
    /// The cloud's clock against the gateway's, from each answer's `Date`.
    let clock: CloudClockOffset

    /// The base URL of the node in use, for the next request.
    var baseURL: String { nodes.current() }
    /// The largest answer accepted, compressed and decompressed.
    let maxAnswerBytes = 256 * 1024 * 1024

    /// HTTP Basic with the gateway's id and secret; nil when its client certificate alone
    /// proves its id.
    var authorization: String? {
        link.secret.map { "Basic " + Data("\(link.gatewayID):\($0)".utf8).base64EncodedString() }
    }

    private var coding: ContentCoding {
        switch link.compression {
        case .zstd: .zstd
        case .deflate: .deflate
        case .none: .identity
        }
    }

    /// Posts a batch body (uncompressed JSON) and returns the cloud's answer, read against
    /// `outline` (the body's row ids, section by section).
    ///
    /// With zstd and a dictionary book, each section is its own frame, compressed with its
    /// table's acknowledged dictionary, and noted in the book as a sample. A body that
    /// compression would not make smaller is sent as it is. On a link where the body takes
    /// seconds it goes in resumable frames (``BatchUpload``); `resuming` (the batch went
    /// before) first asks where the cloud's copy of a cut one ends.
    ///
    /// - Parameter appliedBefore: for a batch that went before, whether the cloud applied it
    ///   already (its stored answer, and the traffic of asking): asked before the body goes
    ///   again, beside the question where a framed body's copy ends.
    func post(
        batch body: [UInt8], outline: BatchOutline, dictionaries book: DictionaryBook? = nil, resuming: Bool = false,
        appliedBefore: (@Sendable () async throws(CloudError) -> (BatchAnswer, Traffic)?)? = nil
    ) async throws(CloudError) -> (BatchAnswer, Traffic) {
        try await post(
            batch: try compress(batch: body, dictionaries: book), outline: outline, resuming: resuming,
            appliedBefore: appliedBefore)
    }

    /// A batch body as it goes on the wire.
    struct CompressedBatch: Sendable {
        let payload: [UInt8]
        let coding: ContentCoding
        /// The body's bytes before compression.
        let rawBytes: Int
    }

    /// Compresses a batch body for ``post(batch:outline:resuming:appliedBefore:)``, noting its
    /// sections as dictionary samples; a body compression would not make smaller goes as it is.
    ///
    /// Apart from the post so that a batch built ahead is compressed while it waits, not when
    /// its turn comes: a gateway back from an outage compressed its first large batch (at two
    /// levels, ``LevelTrials``) while the cloud waited for it (docs/BENCHMARKS.md).
    func compress(batch body: [UInt8], dictionaries book: DictionaryBook?) throws(CloudError) -> CompressedBatch {
        let (payload, coding) = try compress(body, book: book)
        guard payload.count < body.count else { return CompressedBatch(payload: body, coding: .identity, rawBytes: body.count) }
        return CompressedBatch(payload: payload, coding: coding, rawBytes: body.count)
    }

    /// Posts a compressed batch body; see ``post(batch:outline:dictionaries:resuming:appliedBefore:)``.
    func post(
        batch compressed: CompressedBatch, outline: BatchOutline, resuming: Bool = false,
        appliedBefore: (@Sendable () async throws(CloudError) -> (BatchAnswer, Traffic)?)? = nil
    ) async throws(CloudError) -> (BatchAnswer, Traffic) {
        var traffic = Traffic(sentRaw: compressed.rawBytes)
        let (payload, coding) = (compressed.payload, compressed.coding)
        let document: JSONValue
        if BatchUpload.pays(bytes: payload.count, on: watch.model) {
            switch try await BatchUpload(payload: payload, coding: coding)
                .send(resuming: resuming, over: self, appliedBefore: appliedBefore)
            {
            case .appliedBefore(let answer, let asked):
                return (answer, asked)
            case .answered(let answer, let exchanged):
                traffic.sentCompressed = exchanged.sentCompressed
                traffic.received = exchanged.received
                document = answer
            }
        } else {
            if let appliedBefore, let stored = try await appliedBefore() { return stored }
            traffic.sentCompressed = payload.count
            var request = HTTPClientRequest(url: baseURL + "/v1/batches")
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            if let header = coding.header { request.headers.add(name: "Content-Encoding", value: header) }
            let received: Int
            (document, received) = try await exchange(request, body: payload, timeout: link.requestTimeout)
            traffic.received = received
        }
        do {
            return (try BatchAnswer.decode(document, outline: outline), traffic)
        } catch {
            throw .badAnswer("\(error)")
        }
    }

    private func compress(_ body: [UInt8], book: DictionaryBook?) throws(CloudError) -> ([UInt8], ContentCoding) {
        do {
            guard coding == .zstd, let book else {
                return (try Compressor.compress(body, coding: coding, level: link.level), coding)
            }
            let segments = BatchSegments.cut(body).segments
            let framed = segments.map { segment in
                FramedZstd.Segment(body[segment.range], dictionary: segment.table.flatMap(book.dictionary(for:)))
            }
            let tables = segments.compactMap(\.table)
            let payload: [UInt8]
            let rate = watch.model.estimate.bytesPerSecondUp
            switch levels.plan(bytes: body.count, tables: tables, linkBytesPerSecond: rate) {
            case .level(let level):
                payload = try FramedZstd.compress(segments: framed, level: level)
            case .trial:
                let configured = try FramedZstd.compress(segments: framed, level: link.level)
                let fast = try FramedZstd.compress(segments: framed, level: LevelTrials.fastLevel)
                let level = levels.record(
                    tables: tables, configuredBytes: configured.count, fastBytes: fast.count, linkBytesPerSecond: rate)
                payload = level == LevelTrials.fastLevel ? fast : configured
            }
            for segment in segments {
                if let table = segment.table { book.record(table: table, section: body[segment.range]) }
            }
            return (payload, .zstd)
        } catch {
            throw .badAnswer("cannot compress the batch: \(error)")
        }
    }

    /// Gives the cloud a dictionary (`PUT /v1/dictionaries/{id}`); the bytes it took.
    func upload(_ dictionary: ZstdDictionary, table: String) async throws(CloudError) -> Traffic {
        var traffic = Traffic(sentRaw: dictionary.bytes.count)
        let payload: [UInt8]
        do {
            payload = try Compressor.compress(dictionary.bytes, coding: .zstd, level: 19)
        } catch {
            throw .badAnswer("cannot compress the dictionary: \(error)")
        }
        traffic.sentCompressed = payload.count
        var request = HTTPClientRequest(url: baseURL + "/v1/dictionaries/\(dictionary.id)?table=\(table)")
        request.method = .PUT
        request.headers.add(name: "Content-Type", value: "application/octet-stream")
        request.headers.add(name: "Content-Encoding", value: "zstd")
        traffic.received = try await exchange(request, body: payload, timeout: link.requestTimeout).1
        return traffic
    }

    /// Deletes a retired dictionary in the cloud; a 404 (already gone) counts as done.
    func delete(dictionary id: UInt32) async throws(CloudError) -> Traffic {
        var request = HTTPClientRequest(url: baseURL + "/v1/dictionaries/\(id)")
        request.method = .DELETE
        do {
            return Traffic(received: try await exchange(request, timeout: link.requestTimeout, emptyAnswer: true).1)
        } catch .refused(404, _, _) {
            return Traffic()
        }
    }

    /// Waits up to `wait` for tables to move past `versions`; the tables that did, and the
    /// answer's size on the wire.
    /// `GET /v1/notify`: waits up to `wait` for a table of `versions` to move past the cursor
    /// given. Tables in `inline` may come back as pages (`changes`) to apply instead of pulling.
    func notify(
        versions: TableVersions, replica: String, scopes: TableScopes = TableScopes(), inline: [String] = [],
        wait: Duration
    ) async throws(CloudError) -> (NotifyAnswer, Int) {
        let query = Self.notifyQuery(versions: versions, replica: replica, scopes: scopes, inline: inline, wait: wait)
        var request = HTTPClientRequest(url: baseURL + "/v1/notify?" + query)
        request.method = .GET
        let (document, received) = try await exchange(request, timeout: link.requestTimeout, quiet: wait)
        do {
            return (try NotifyAnswer.decode(document), received)
        } catch {
            throw .badAnswer(error.message)
        }
    }

    /// The query of `GET /v1/notify`, polled or streamed.
    static func notifyQuery(
        versions: TableVersions, replica: String, scopes: TableScopes, inline: [String], wait: Duration
    ) -> String {
        var query = "versions=\(versions.queryText)&wait=\(wait.milliseconds / 1000)&replica=\(replica)"
        if !scopes.isEmpty { query += "&scopes=" + Self.percentEncoded(scopes.encode()) }
        if !inline.isEmpty { query += "&inline=" + inline.joined(separator: ",") }
        return query
    }

    /// `bytes` with every byte but the unreserved ones (RFC 3986 §2.3) percent-encoded.
    static func percentEncoded(_ bytes: [UInt8]) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.append(byte)
            default:
                out.append(UInt8(ascii: "%"))
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Whether the cloud answers `GET /healthz` within `timeout`: the uplink's cheap probe.
    /// A node that does not answer is left for the next, so the uplink is available while any
    /// node is.
    ///
    /// With `knockFirst` (the cloud gave no answer last time, no proxy in between), a node
    /// that refuses a bare TCP connection is passed over without an HTTP request
    /// (``ListenerCheck``): an outage's probes cost a third to a half less CPU so.
    func probe(timeout: Duration, knockFirst: Bool = false) async -> Bool {
        for _ in nodes.urls.indices {
            let base = baseURL
            // Connecting is bounded as AsyncHTTPClient bounds its own connects (10 s).
            if knockFirst, let check = nodes.checks[base], await !check.accepts(timeout: min(timeout, .seconds(10))) {
                nodes.failed(base)
                continue
            }
            var request = HTTPClientRequest(url: base + "/healthz")
            request.method = .GET
            do {
                let response = try await StaleConnection.retrying(
                    { try await http.execute(request, timeout: .milliseconds(timeout.milliseconds)) },
                    stale: watch.model.staleConnection)
                _ = try await response.body.collect(upTo: 4096)
                if response.status == .ok {
                    nodes.answered()
                    return true
                }
            } catch {}
            nodes.failed(base)
        }
        return false
    }

    /// Sends `request` with `body` and reads its JSON answer (nothing, when `emptyAnswer` and the
    /// status is 204), refusing any status but 2xx with the cloud's error code.
    func exchange(
        _ request: HTTPClientRequest, body: [UInt8]? = nil, timeout: Duration, quiet: Duration = .zero,
        emptyAnswer: Bool = false, smallAnswer: Bool = false
    ) async throws(CloudError) -> (JSONValue, Int) {
        let (response, bytes, received) = try await send(
            request, body: body, timeout: timeout, quiet: quiet, maxAnswer: maxAnswerBytes, smallAnswer: smallAnswer)
        if emptyAnswer, response.status == .noContent { return (.null, received) }
        return (try Self.json(bytes, status: response.status), received)
    }

    /// Sends `request` with the gateway's credentials and `body`, and reads the whole answer,
    /// decoded; the bytes it took on the wire. The ``TransferWatch`` cuts it when it stops
    /// moving; `timeout` (`request_timeout`) is only the fixed part of its bound, and `quiet`
    /// how long the answer may rightly take once the body is sent. `smallAnswer`, `queued`: see
    /// ``sendRaw(_:body:timeout:quiet:maxAnswer:smallAnswer:tap:queued:)``.
    func send(
        _ request: HTTPClientRequest, body: [UInt8]? = nil, timeout: Duration, quiet: Duration = .zero,
        maxAnswer: Int, smallAnswer: Bool = false, queued: (@Sendable () -> Void)? = nil
    ) async throws(CloudError) -> (HTTPClientResponse, [UInt8], Int) {
        let (response, answer) = try await sendRaw(
            request, body: body, timeout: timeout, quiet: quiet, maxAnswer: maxAnswer, smallAnswer: smallAnswer,
            queued: queued)
        let bytes = try Self.decoded(answer, response: response, maxAnswer: maxAnswer)
        return (response, bytes, answer.readableBytes)
    }

    /// ``send(_:body:timeout:quiet:maxAnswer:smallAnswer:queued:)`` without decoding the answer:
    /// its body as it was on the wire; `tap` sees it arrive, and `queued` is called as the
    /// request takes its place in the queue for a connection (``TransferWatch``).
    ///
    /// With `smallAnswer` (a chunk's or a manifest's: tens of bytes) the request does not offer
    /// to take a compressed answer: on a metered link the offer's 32 bytes cost more than
    /// compressing such an answer could save.
    func sendRaw(
        _ request: HTTPClientRequest, body: [UInt8]? = nil, timeout: Duration, quiet: Duration = .zero,
        maxAnswer: Int, smallAnswer: Bool = false, tap: AnswerTap? = nil, queued: (@Sendable () -> Void)? = nil
    ) async throws(CloudError) -> (HTTPClientResponse, ByteBuffer) {
        var request = request
        if let authorization { request.headers.add(name: "Authorization", value: authorization) }
        if !smallAnswer { request.headers.add(name: "Accept-Encoding", value: "zstd, deflate") }
        let response: HTTPClientResponse
        let answer: ByteBuffer
        do {
            (response, answer) = try await watch.exchange(
                request, body: body, on: http, allowance: timeout, quiet: quiet, maxAnswer: maxAnswer, tap: tap,
                queued: queued
            ).parts
        } catch {
            nodeFailed(request.url)
            throw error.cloudError
        }
        // A proxy or load balancer in front of a node that is down, or a node without its
        // database: the next node may serve.
        if Self.nodeDown(response.status) { nodeFailed(request.url) } else { nodes.answered() }
        clock.heard(date: response.headers.first(name: "Date"))
        return (response, answer)
    }

    /// The answer's body with its `Content-Encoding` undone.
    static func decoded(_ answer: ByteBuffer, response: HTTPClientResponse, maxAnswer: Int) throws(CloudError) -> [UInt8] {
        let coding = coding(of: response)
        do {
            return try answer.withUnsafeReadableBytes { raw throws(DecompressionError) in
                try Decompressor.decompress(raw, coding: coding, maxOutput: maxAnswer)
            }
        } catch {
            throw .badAnswer("\(coding.rawValue) body: \(error)")
        }
    }

    static func coding(of response: HTTPClientResponse) -> ContentCoding {
        response.headers.first(name: "Content-Encoding").flatMap { ContentCoding(header: $0) } ?? .identity
    }

    /// Whether an answer with `status` says its node cannot serve now (a proxy or load
    /// balancer in front of a node that is down, a node without its database, a node stopping).
    static func nodeDown(_ status: HTTPResponseStatus) -> Bool {
        [.badGateway, .serviceUnavailable, .gatewayTimeout].contains(status)
    }

    /// Moves requests on from the node `url` was sent to.
    func nodeFailed(_ url: String) {
        guard let node = nodes.urls.first(where: { url.hasPrefix($0 + "/") }) else { return }
        nodes.failed(node)
    }

    /// Reads a JSON answer, or the cloud's error from a non-2xx one.
    static func json(_ bytes: [UInt8], status: HTTPResponseStatus) throws(CloudError) -> JSONValue {
        let response = (status: status, bytes: bytes)
        let succeeded = (200..<300).contains(response.status.code)
        let document: JSONValue
        do {
            document = try JSONParser.parse(response.bytes)
        } catch {
            // An error status without Dally's JSON comes from something in front of the cloud
            // (a proxy's 502 page while the cloud is down): the status still says what failed.
            guard succeeded else {
                // On one line: a proxy's HTML page broke each text log line it was logged in.
                let text = String(decoding: response.bytes.prefix(120), as: UTF8.self)
                    .split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
                throw .refused(
                    status: Int(response.status.code), code: nil, message: "an answer that is not Dally's: \(text)")
            }
            throw .badAnswer("status \(response.status.code): \(error)")
        }
        guard succeeded else {
            let code = document["error"]?["code"].flatMap { if case .string(let s) = $0 { s } else { nil } } ?? "unknown"
            let message = document["error"]?["message"].flatMap { if case .string(let s) = $0 { s } else { nil } } ?? ""
            guard let known = DallyError.Code(rawValue: code) else {
                throw .refused(status: Int(response.status.code), code: nil, message: "\(code): \(message)")
            }
            throw .refused(status: Int(response.status.code), code: known, message: message)
        }
        return document
    }
}
