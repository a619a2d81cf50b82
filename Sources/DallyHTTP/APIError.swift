import DallyCore
import Hummingbird
import Logging

extension DallyError.Code {
    /// The HTTP status for each error code. The only place where domain errors meet HTTP.
    public var status: HTTPResponse.Status {
        switch self {
        case .malformedJSON, .badRequest, .badQuery, .invalidID, .badEncoding, .badDictionary: .badRequest
        case .unauthorized: .unauthorized
        case .forbidden: .forbidden
        case .unknownTable, .notFound: .notFound
        case .methodNotAllowed: .methodNotAllowed
        case .versionMismatch, .batchReused, .syncDisabled, .unknownDictionary, .dictionaryConflict, .missingChunks:
            .conflict
        case .unsupportedEncoding: .unsupportedMediaType
        case .bodyTooLarge, .tooManyRows, .objectTooLarge: .contentTooLarge
        case .unknownColumn, .wrongType, .objectColumn, .batchRejected, .hashMismatch, .unknownObject:
            .unprocessableContent
        case .rangeNotSatisfiable: .rangeNotSatisfiable
        case .tooManyWaiters, .shuttingDown, .objectUnavailable: .serviceUnavailable
        case .objectFetchTimeout: .gatewayTimeout
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

/// Turns every error a handler throws into Dally's JSON error shape, so that clients see one
/// format whatever failed: Hummingbird's own errors (no route, body too large) get a code by
/// their status, and anything unexpected is logged and answered as `internal`.
public struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    public init() {}

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as DallyError {
            return try error.response(from: request, context: context)
        } catch let error as HTTPError {
            return try Self.translate(error).response(from: request, context: context)
        } catch let error as any HTTPResponseError {
            return try DallyError(Self.code(for: error.status), "\(error)").response(from: request, context: context)
        } catch {
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
