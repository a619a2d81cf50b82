import DallyCore
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1

extension DallyError.Code {
    /// The HTTP status for each error code. The only place where domain errors meet HTTP.
    public var status: HTTPResponse.Status {
        switch self {
        case .malformedJSON, .badRequest, .badQuery, .invalidID, .badEncoding, .badDictionary, .tlsRequired:
            .badRequest
        case .unauthorized: .unauthorized
        case .forbidden, .outOfScope: .forbidden
        case .unknownTable, .notFound: .notFound
        case .methodNotAllowed: .methodNotAllowed
        case .versionMismatch, .batchReused, .syncDisabled, .unknownDictionary, .dictionaryConflict, .missingChunks,
            .uploadOffset, .resyncRequired:
            .conflict
        case .unsupportedEncoding: .unsupportedMediaType
        case .bodyTooLarge, .tooManyRows, .objectTooLarge: .contentTooLarge
        case .unknownColumn, .wrongType, .objectColumn, .batchRejected, .hashMismatch, .unknownObject:
            .unprocessableContent
        case .rangeNotSatisfiable: .rangeNotSatisfiable
        case .headersTooLarge: .requestHeaderFieldsTooLarge
        case .bodyTimeout: .requestTimeout
        case .tooManyWaiters, .shuttingDown, .objectUnavailable, .storeUnavailable: .serviceUnavailable
        case .objectFetchTimeout: .gatewayTimeout
        case .insufficientStorage: .init(code: 507, reasonPhrase: "Insufficient Storage")
        case .storage, .internalError: .internalServerError
        }
    }
}

extension DallyError: HTTPResponseError {
    public var status: HTTPResponse.Status { code.status }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        JSONResponse.error(self)
    }
}

/// Gives every request an answer its client can read.
///
/// Errors a handler throws become Dally's JSON error shape, so that clients see one format
/// whatever failed: Hummingbird's own errors (no route, body too large) get a code by their
/// status, and anything unexpected is logged and answered as `internal`.
///
/// And a request body the handler left unread is drained before the answer goes, up to a
/// bound, past which the connection is closed. A client such as Python's urllib writes the
/// whole body before it reads anything and asks to close the connection after the answer;
/// Hummingbird does not read the rest of such a request's body, so when the server answers
/// early (401, 404, 413 at the limit) the client blocks on its write and hangs until its own
/// timeout. Drained, it finishes writing and reads the answer. Past the bound the answer goes
/// first, marked `Connection: close`, and the body is read on behind it, up to ``lingerBytes``
/// (a client that reads the answer and stops writing ends it at once), then the connection
/// closes. (This lives here, not in a middleware of its own, so that a parked long-poll's task
/// carries no extra frame: thousands of them are held at once.)
///
/// A request for a route that exists with other methods is answered `405 method_not_allowed`
/// with `Allow` (``RouteMethods``), where Hummingbird's router says `404`.
///
/// ```swift
/// let methods = RouteMethods()
/// router.middlewares.add(ErrorMiddleware(bodyLimit: config.limits.maxBodyBytes, routes: methods))
/// // … routes …
/// methods.learn(router.routes.map { ($0.path, $0.method) })
/// ```
public struct ErrorMiddleware: RouterMiddleware {
    public typealias Context = DallyRequestContext

    /// The least that is drained, whatever the body limit: more than a loopback or LAN socket
    /// buffers, so that a client refused early with a body of a few megabytes still gets its
    /// answer.
    public static let minimumDrainBytes = 8 << 20

    /// The most bytes read and dropped after the handler is done, before the answer goes.
    let maxDrainBytes: Int

    /// The router's routes, to tell a method the route does not take from no route.
    let routes: RouteMethods

    /// - Parameters:
    ///   - bodyLimit: `limits.max_body_bytes`; as much again is drained after a 413.
    ///   - routes: the router's routes, learnt once they are registered.
    public init(bodyLimit: Int, routes: RouteMethods) {
        maxDrainBytes = max(bodyLimit, Self.minimumDrainBytes)
        self.routes = routes
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // One frame, no helper awaited in between: a parked long-poll's task holds it.
        var request = request
        var unread: SharedRequestBody?
        // Most requests (GETs, long-polls) have no body: nothing to drain, nothing to wrap.
        if Self.mayHaveBody(request) {
            let body = SharedRequestBody(request.body)
            request.body = RequestBody(asyncSequence: body)
            unread = body
        }
        var response: Response
        // A body refused by its announced length, or announced longer than is ever drained,
        // is not waited for: its answer goes at once, even to a client that sends nothing
        // until it has one.
        let announced = BodyCoding.announcedLength(request)
        var refusedUnread = announced.map { $0 > maxDrainBytes } ?? false
        do {
            response = try await next(request, context)
        } catch {
            response = try Self.answer(error, request: request, context: context, routes: routes)
            if let refusal = error as? DallyError, refusal.code == .bodyTooLarge || refusal.code == .objectTooLarge,
                announced != nil
            {
                refusedUnread = true
            }
        }
        switch refusedUnread ? .tooLong : await unread?.drain(upTo: maxDrainBytes) {
        case .tooLong?:
            // Answered all the same, the connection closed after it: the answer goes out first,
            // and the body is read on behind it, so that a client which writes before it reads
            // finishes and reads it. One that stops writing when it reads the answer (curl)
            // ends the connection at once.
            if let unread {
                context.logger.debug("answering a request whose body went past what is drained, then closing")
                response.headers[.connection] = "close"
                response.body = Self.lingering(response.body, reading: unread, on: context.channel)
            }
        case .brokenOff?:
            // A client that closed its side mid-body (a refusal decided before the body was
            // read) still gets its answer, and the connection ends after it.
            response.headers[.connection] = "close"
        case .ended?, nil:
            break
        }
        return response
    }

    /// The most bytes read behind an answer to a body too long to drain first: past them the
    /// connection is closed under a client still writing.
    public static let lingerBytes = 256 << 20

    /// `answer`, then up to ``lingerBytes`` more of the request's body read and dropped; past
    /// them `channel` is closed (after a request that did not ask to close, Hummingbird would
    /// read on for as long as the client writes).
    static func lingering(
        _ answer: ResponseBody, reading body: SharedRequestBody, on channel: any Channel
    ) -> ResponseBody {
        ResponseBody(contentLength: answer.contentLength) { writer in
            let written = answer
            try await written.write(writer)
            if case .tooLong = await body.drain(upTo: lingerBytes) { channel.close(promise: nil) }
        }
    }

    /// Whether the head announces a body: a `Content-Length` above 0, or a transfer coding.
    static func mayHaveBody(_ request: Request) -> Bool {
        if request.headers[.transferEncoding] != nil { return true }
        guard let length = request.headers[.contentLength] else { return false }
        return length != "0"
    }

    /// The JSON answer for `error`.
    static func answer(_ error: any Error, request: Request, context: Context, routes: RouteMethods) throws -> Response {
        switch error {
        case let error as DallyError:
            return try error.response(from: request, context: context)
        case let error as HTTPError where error.status == .notFound:
            let allowed = routes.allowed(for: request.uri.path)
            // A route that takes this method and says 404 itself is not the router's 404.
            guard !allowed.isEmpty, !allowed.contains(request.method) else {
                return try translate(error).response(from: request, context: context)
            }
            let names = allowed.map(\.rawValue).joined(separator: ", ")
            var response = JSONResponse.error(
                DallyError(.methodNotAllowed, "\(request.method.rawValue) is not allowed on \(request.uri.path); it takes \(names)"))
            response.headers[.allow] = names
            return response
        case let error as HTTPError:
            return try translate(error).response(from: request, context: context)
        case let error as HTTPParserError:
            // The body could not be read (a bad chunk size): the client's fault. The connection
            // ends after the answer (``UnreadableRequestAnswer`` answers one between requests).
            return JSONResponse.error(UnreadableRequestAnswer.refusal(for: error))
        case let error as any HTTPResponseError:
            return try DallyError(code(for: error.status), "\(error)").response(from: request, context: context)
        default:
            context.logger.error("request failed", metadata: ["error": "\(String(reflecting: error))"])
            return try DallyError(.internalError, "the server could not complete the request; see its log")
                .response(from: request, context: context)
        }
    }

    static func translate(_ error: HTTPError) -> DallyError {
        let code = code(for: error.status)
        let message: String =
            switch code {
            case .bodyTooLarge: "the request body is larger than the server accepts (limits.max_body_bytes)"
            case .notFound: "no such route"
            case .methodNotAllowed: "method not allowed on this route"
            default: error.body ?? error.status.reasonPhrase
            }
        return DallyError(code, message)
    }

    static func code(for status: HTTPResponse.Status) -> DallyError.Code {
        switch status {
        case .contentTooLarge: .bodyTooLarge
        case .notFound: .notFound
        case .methodNotAllowed: .methodNotAllowed
        case .unauthorized: .unauthorized
        case .forbidden: .forbidden
        case .badRequest: .badRequest
        case .serviceUnavailable: .shuttingDown
        default: .internalError
        }
    }
}
