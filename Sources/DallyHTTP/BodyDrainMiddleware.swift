import Hummingbird
import NIOCore

/// Reads what a request's handler left of its body before the answer goes, up to a bound, and
/// closes the connection when more is left.
///
/// A client such as Python's urllib writes the whole body before it reads anything. When the
/// server answers early (401, 404, 413 at the limit) and stops reading, such a client blocks on
/// its write and never sees the answer: it hangs until its own timeout. Draining lets it
/// finish writing and read the answer; past `maxDrainBytes` the connection is closed instead,
/// so a client sending far too much gets a prompt reset, never a hang.
///
/// Install it first, outside the error middleware, so that it sees every answer:
///
/// ```swift
/// router.middlewares.add(BodyDrainMiddleware(bodyLimit: config.limits.maxBodyBytes))
/// router.middlewares.add(ErrorMiddleware())
/// ```
public struct BodyDrainMiddleware: RouterMiddleware {
    public typealias Context = DallyRequestContext

    /// The least that is drained, whatever the body limit: more than a loopback or LAN socket
    /// buffers, so that a client refused early (401, 404) with a body of a few megabytes still
    /// gets its answer.
    public static let minimumDrainBytes = 8 << 20

    /// The most bytes read and dropped after the handler is done.
    let maxDrainBytes: Int

    /// - Parameter bodyLimit: `limits.max_body_bytes`; as much again is drained after a 413.
    public init(bodyLimit: Int) { maxDrainBytes = max(bodyLimit, Self.minimumDrainBytes) }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let body = SharedRequestBody(request.body)
        var request = request
        request.body = RequestBody(asyncSequence: body)
        let response: Response
        do {
            response = try await next(request, context)
        } catch {
            await settle(body, context: context)
            throw error
        }
        await settle(body, context: context)
        return response
    }

    private func settle(_ body: SharedRequestBody, context: Context) async {
        guard await !body.drain(upTo: maxDrainBytes) else { return }
        context.logger.debug("closing a connection whose request body went past what is drained")
        context.channel.close(promise: nil)
    }
}
