import AsyncHTTPClient
import DallyCompression
import DallyCore
import DallySync
import DallyTestSupport
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import Synchronization

/// One uplink's network, seen from outside the gateway: forwards every request to the cloud and
/// records what crossed it — bytes both ways (request and status lines, headers and bodies as
/// sent), and, decoded, which tables each batch carried up, asked down, and got back.
///
/// `refuseBatches` makes the network fail batches (502, nothing forwarded), as a link that
/// drops mid-transfer does.
final class InspectingProxy: Sendable {
    /// One request that crossed this network.
    struct Exchange: Sendable {
        let path: String
        var batchID: String?
        /// Tables whose changes went up, tables named in `since`, tables in the answer's
        /// results and downstream pages.
        var uploads: Set<String> = []
        var pulls: Set<String> = []
        var answered: Set<String> = []
        var forwarded = true
        var method = "GET"
        /// A notify request that asked for a stream (`stream=1`).
        var streamed = false
        /// The request's header names, and the forwarded answer's, in lower case.
        var headers: Set<String> = []
        var answerHeaders: Set<String> = []
    }

    private struct State {
        var exchanges: [Exchange] = []
        var bytesUp = 0
        var bytesDown = 0
        var refuseBatches = false
        /// Answer a notify poll that names `inline` as a cloud from before it did.
        var refuseInline = false
        /// Answer a notify request that asks for a stream as a cloud from before streams.
        var refuseStream = false
        /// Answer `GET /v1/tables` as a cloud from before it listed its tables.
        var refuseDeclarations = false
        /// Answer `POST /v1/tables` as a cloud that lists its tables but takes none: `405`.
        var refuseTelling = false
        /// Answer `GET /v1/tables` with this document: a node on another configuration.
        var declarations: String?
        /// Answer every request `503`: a node that cannot serve.
        var unavailable = false
        /// Paths of requests as they arrive, answered or not (a long-poll is held).
        var started: [String] = []
        /// Chunk uploads still let through before the link drops them (nil: all).
        var chunkPutsLeft: Int?
        /// Chunk uploads still let through at once before the link holds the rest (nil: all),
        /// the held ones waiting here until released.
        var chunkPutsBeforeHold: Int?
        var heldChunkPuts: [CheckedContinuation<Void, Never>] = []
        /// Whether batches wait here until released, and those waiting (resumed with whether
        /// the link drops them).
        var holdBatches = false
        var heldBatches: [CheckedContinuation<Bool, Never>] = []
        /// Whether the answers to missing-chunks asks wait here, the cloud having answered,
        /// until released, and those waiting.
        var holdAsks = false
        var heldAsks: [CheckedContinuation<Void, Never>] = []
    }

    let http: HTTPClient
    private let state = Mutex(State())
    private let upstreamURL = Mutex("")
    let server = ServiceRunner()

    init(upstream: String, http: HTTPClient) {
        upstreamURL.withLock { $0 = upstream }
        self.http = http
    }

    var upstream: String { upstreamURL.withLock { $0 } }

    var exchanges: [Exchange] { state.withLock { $0.exchanges } }
    var started: [String] { state.withLock { $0.started } }
    var bytes: (up: Int, down: Int) { state.withLock { ($0.bytesUp, $0.bytesDown) } }
    var batches: [Exchange] { exchanges.filter { $0.path == "/v1/batches" } }
    /// Every table any byte of which crossed this network, either way.
    var tablesSeen: Set<String> {
        exchanges.reduce(into: Set<String>()) { $0.formUnion($1.uploads.union($1.pulls).union($1.answered)) }
    }

    func refuseBatches(_ refuse: Bool) { state.withLock { $0.refuseBatches = refuse } }

    /// Answers notify polls that name `inline` as an older cloud does: `400 bad_query`.
    func refuseInline(_ refuse: Bool) { state.withLock { $0.refuseInline = refuse } }

    /// Answers notify requests that ask for a stream as a cloud from before streams does:
    /// `400 bad_query` naming `stream`.
    func refuseStream(_ refuse: Bool) { state.withLock { $0.refuseStream = refuse } }

    /// Answers `GET /v1/tables` as a cloud from before the route does: `404 not_found`.
    func refuseDeclarations(_ refuse: Bool) { state.withLock { $0.refuseDeclarations = refuse } }

    /// Answers `POST /v1/tables` as a cloud that lists its tables but is told none does: `405`.
    func refuseTelling(_ refuse: Bool) { state.withLock { $0.refuseTelling = refuse } }

    /// Answers `GET /v1/tables` with `document` as a cloud node on another configuration does;
    /// nil forwards it again.
    func answerDeclarations(_ document: String?) { state.withLock { $0.declarations = document } }

    /// Answers every request `503`, as a node that cannot serve does, while `unavailable`.
    func makeUnavailable(_ unavailable: Bool) { state.withLock { $0.unavailable = unavailable } }

    /// Lets `count` more chunk uploads through, then fails the rest (502) as a link that
    /// drops mid-transfer does; nil lets every one through again.
    func dropChunkUploads(after count: Int?) { state.withLock { $0.chunkPutsLeft = count } }

    /// Lets `count` more chunk uploads through, then holds the rest (a link that stalls)
    /// until ``releaseChunkUploads()``.
    func holdChunkUploads(after count: Int) { state.withLock { $0.chunkPutsBeforeHold = count } }

    /// Holds batches here (a link that stalls) until ``releaseBatches(dropping:)``.
    func holdBatches() { state.withLock { $0.holdBatches = true } }

    /// Batches held right now.
    var heldBatches: Int { state.withLock { $0.heldBatches.count } }

    /// Ends the hold: the held batches fail (502, nothing forwarded) when `dropping`, else go
    /// on to the cloud; later ones pass.
    func releaseBatches(dropping: Bool) {
        let held = state.withLock { state in
            state.holdBatches = false
            defer { state.heldBatches = [] }
            return state.heldBatches
        }
        for continuation in held { continuation.resume(returning: dropping) }
    }

    /// Lets held chunk uploads, and all later ones, through.
    func releaseChunkUploads() {
        for continuation in takeHeld(\.heldChunkPuts, ending: { $0.chunkPutsBeforeHold = nil }) { continuation.resume() }
    }

    /// Ends a hold (`ending`) and takes what it held, to be resumed outside the lock.
    private func takeHeld(
        _ held: WritableKeyPath<State, [CheckedContinuation<Void, Never>]>, ending: (inout State) -> Void
    ) -> [CheckedContinuation<Void, Never>] {
        state.withLock { state in
            ending(&state)
            defer { state[keyPath: held] = [] }
            return state[keyPath: held]
        }
    }

    /// Chunk uploads held right now.
    var heldChunkUploads: Int { state.withLock { $0.heldChunkPuts.count } }

    /// Holds the answers to missing-chunks asks here, once the cloud has answered them (an
    /// answer slow to come back), until ``releaseAskAnswers()``.
    func holdAskAnswers() { state.withLock { $0.holdAsks = true } }

    /// Asks whose answers are held right now.
    var heldAskAnswers: Int { state.withLock { $0.heldAsks.count } }

    /// Lets held ask answers, and all later ones, go back.
    func releaseAskAnswers() {
        for continuation in takeHeld(\.heldAsks, ending: { $0.holdAsks = false }) { continuation.resume() }
    }

    /// The chunk uploads that crossed to the cloud, by chunk hash, in order.
    var chunkUploads: [String] {
        exchanges.filter { $0.method == "PUT" && $0.path.hasPrefix("/v1/chunks/") && $0.forwarded }
            .map { String($0.path.dropFirst("/v1/chunks/".count)) }
    }

    /// Requests that crossed for objects (chunks and manifests, either way).
    var objectExchanges: [Exchange] {
        exchanges.filter { $0.path.hasPrefix("/v1/chunks") || $0.path.hasPrefix("/v1/objects") }
    }

    func start(upstream: String) async throws {
        upstreamURL.withLock { $0 = upstream }
        try await server.start { report in
            [
                Application(
                    router: router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                    onServerRunning: { await report($0.localAddress?.port ?? 0) }, logger: Logger(label: "proxy"))
            ]
        }
    }

    var url: String { "http://127.0.0.1:\(server.port)" }

    private func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.post("/v1/batches") { request, _ in try await self.forward(request) }
        router.get("/v1/notify") { request, _ in try await self.forward(request) }
        router.get("/healthz") { request, _ in try await self.forward(request) }
        router.get("/v1/tables") { request, _ in try await self.forward(request) }
        router.post("/v1/tables") { request, _ in try await self.forward(request) }
        router.post("/v1/chunks/missing") { request, _ in try await self.forward(request) }
        router.put("/v1/chunks/:hash") { request, _ in try await self.forward(request) }
        router.get("/v1/chunks/:hash") { request, _ in try await self.forward(request) }
        router.put("/v1/objects/:hash") { request, _ in try await self.forward(request) }
        router.get("/v1/objects/:hash") { request, _ in try await self.forward(request) }
        return router
    }

    private func forward(_ request: Request) async throws -> Response {
        let path = request.uri.path
        state.withLock { $0.started.append(path) }
        let body = try await request.body.collect(upTo: 64 << 20)
        var exchange = Exchange(path: path)
        exchange.method = request.method.rawValue
        exchange.headers = Set(request.headers.map(\.name.canonicalName))
        var outline = BatchOutline(sections: [])
        var requestBytes = "\(request.method.rawValue) \(request.uri.description) HTTP/1.1\r\n".utf8.count + 2
        for field in request.headers { requestBytes += field.name.rawName.utf8.count + field.value.utf8.count + 4 }
        requestBytes += body.readableBytes
        // A batch body in frames (PROTOCOL.md §6.1) is read when one frame carries it whole.
        let framed = request.headers.first { $0.name.canonicalName == "dally-upload-length" }?.value
        let wholeBody = framed == nil || framed == "\(body.readableBytes)"
        if path == "/v1/batches", wholeBody {
            let coding = framed == nil
                ? request.headers[.contentEncoding]
                : request.headers.first { $0.name.canonicalName == "dally-upload-encoding" }?.value
            let batch = try BatchRequest.decode(JSONParser.parse(try Self.decoded(body, coding: coding)), maxRows: .max)
            exchange.batchID = batch.batchID
            outline = batch.outline
            exchange.uploads = Set(batch.sections.map(\.table))
            exchange.pulls = Set(batch.since.entries.map(\.table))
        }
        exchange.streamed = path == "/v1/notify" && request.uri.query?.contains("stream=1") == true
        let refusedParameter: (name: String, takes: String)? =
            if exchange.streamed, state.withLock({ $0.refuseStream }) {
                ("stream", "inline, replica, scopes, versions, wait")
            } else if path == "/v1/notify", request.uri.query?.contains("inline=") == true,
                state.withLock({ $0.refuseInline })
            {
                ("inline", "replica, scopes, versions, wait")
            } else {
                nil
            }
        if state.withLock({ $0.unavailable }) {
            exchange.forwarded = false
            record(exchange, up: requestBytes, down: 64)
            return Response(
                status: .serviceUnavailable,
                body: .init(byteBuffer: ByteBuffer(string: #"{"error":{"code":"unavailable","message":"this node cannot serve"}}"#)))
        }
        if path == "/v1/tables", request.method == .post, state.withLock({ $0.refuseTelling }) {
            exchange.forwarded = false
            record(exchange, up: requestBytes, down: 64)
            return Response(
                status: .methodNotAllowed,
                body: .init(byteBuffer: ByteBuffer(string: #"{"error":{"code":"method_not_allowed","message":"POST is not allowed on /v1/tables; it takes GET, HEAD"}}"#)))
        }
        if path == "/v1/tables", let document = state.withLock({ $0.declarations }) {
            exchange.forwarded = false
            record(exchange, up: requestBytes, down: 64 + document.utf8.count)
            return Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: document)))
        }
        if path == "/v1/tables", state.withLock({ $0.refuseDeclarations }) {
            exchange.forwarded = false
            record(exchange, up: requestBytes, down: 64)
            return Response(
                status: .notFound,
                body: .init(byteBuffer: ByteBuffer(string: #"{"error":{"code":"not_found","message":"no route GET /v1/tables"}}"#)))
        }
        if let (name, takes) = refusedParameter {
            // As a cloud from before the parameter answers it.
            exchange.forwarded = false
            record(exchange, up: requestBytes, down: 64)
            return Response(
                status: .badRequest,
                body: .init(
                    byteBuffer: ByteBuffer(
                        string: #"{"error":{"code":"bad_query","message":"unknown query parameter '\#(name)'; this route takes \#(takes)","field":"\#(name)"}}"#
                    )))
        }
        let dropped =
            path == "/v1/batches"
            ? await withCheckedContinuation { continuation in
                let held = state.withLock { state in
                    if state.holdBatches { state.heldBatches.append(continuation) }
                    return state.holdBatches
                }
                if !held { continuation.resume(returning: false) }
            } : false
        let refuse = state.withLock { state in
            if path == "/v1/batches" { return state.refuseBatches || dropped }
            guard request.method == .put, path.hasPrefix("/v1/chunks/"), let left = state.chunkPutsLeft else { return false }
            state.chunkPutsLeft = left - 1
            return left <= 0
        }
        if request.method == .put, path.hasPrefix("/v1/chunks/") {
            await withCheckedContinuation { continuation in
                let pass = state.withLock { state in
                    guard let left = state.chunkPutsBeforeHold else { return true }
                    if left > 0 {
                        state.chunkPutsBeforeHold = left - 1
                        return true
                    }
                    state.heldChunkPuts.append(continuation)
                    return false
                }
                if pass { continuation.resume() }
            }
        }
        if refuse {
            exchange.forwarded = false
            record(exchange, up: requestBytes, down: 64)
            return Response(
                status: .badGateway,
                body: .init(byteBuffer: ByteBuffer(string: #"{"error":{"code":"bad_gateway","message":"link dropped"}}"#)))
        }
        var forward = HTTPClientRequest(url: upstream + request.uri.description)
        forward.method = .init(rawValue: request.method.rawValue)
        for field in request.headers
        where ["authorization", "content-encoding", "content-type", "accept-encoding"].contains(field.name.canonicalName)
            || field.name.canonicalName.hasPrefix("dally-upload-")
        {
            forward.headers.add(name: field.name.rawName, value: field.value)
        }
        if request.method != .get { forward.body = .bytes(body) }
        let answer: HTTPClientResponse
        do {
            answer = try await http.execute(forward, timeout: .seconds(120))
        } catch {
            // The cloud is down: a proxy answers 502, with a page of its own.
            return Response(
                status: .badGateway, headers: [.contentType: "text/html"],
                body: .init(byteBuffer: ByteBuffer(string: "<html><body>502 Bad Gateway</body></html>")))
        }
        exchange.answerHeaders = Set(answer.headers.map { $0.name.lowercased() })
        var responseBytes = "HTTP/1.1 \(answer.status.code) \(answer.status.reasonPhrase)\r\n".utf8.count + 2
        for header in answer.headers { responseBytes += header.name.utf8.count + header.value.utf8.count + 4 }
        if answer.headers.first(name: "Content-Type") == "application/x-ndjson" {
            // A notify stream goes through as it comes, its bytes counted as they pass.
            record(exchange, up: requestBytes, down: responseBytes)
            let body = answer.body
            return Response(
                status: .init(code: Int(answer.status.code)), headers: [.contentType: "application/x-ndjson"],
                body: ResponseBody { writer in
                    for try await piece in body {
                        self.state.withLock { $0.bytesDown += piece.readableBytes }
                        try await writer.write(piece)
                    }
                    try await writer.finish(nil)
                })
        }
        let answerBody = try await answer.body.collect(upTo: 64 << 20)
        responseBytes += answerBody.readableBytes
        if path == "/v1/chunks/missing" {
            await withCheckedContinuation { continuation in
                let held = state.withLock { state in
                    if state.holdAsks { state.heldAsks.append(continuation) }
                    return state.holdAsks
                }
                if !held { continuation.resume() }
            }
        }
        if path == "/v1/batches", answer.status == .ok, wholeBody {
            let decoded = try BatchAnswer.decode(
                JSONParser.parse(try Self.decoded(answerBody, coding: answer.headers.first(name: "Content-Encoding"))),
                outline: outline)
            exchange.answered = Set(decoded.results.map(\.table)).union(decoded.changes.map(\.table))
        }
        record(exchange, up: requestBytes, down: responseBytes)
        var headers: HTTPFields = [.contentType: answer.headers.first(name: "Content-Type") ?? "application/json"]
        if let coding = answer.headers.first(name: "Content-Encoding") { headers[.contentEncoding] = coding }
        return Response(
            status: .init(code: Int(answer.status.code)), headers: headers, body: .init(byteBuffer: answerBody))
    }

    private func record(_ exchange: Exchange, up: Int, down: Int) {
        state.withLock { state in
            state.exchanges.append(exchange)
            state.bytesUp += up
            state.bytesDown += down
        }
    }

    static func decoded(_ body: ByteBuffer, coding: String?) throws -> [UInt8] {
        let coding = coding.flatMap { ContentCoding(header: $0) } ?? .identity
        return try Decompressor.decompress(Array(body.readableBytesView), coding: coding, maxOutput: 256 << 20)
    }
}
