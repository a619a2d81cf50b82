import AsyncHTTPClient
import DallyCore
import DallySync
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1

/// Sits between a gateway and the cloud: forwards a batch to the cloud, lets it be applied,
/// then holds the answer back until `release` ends, so the batch is in flight at the gateway
/// while already applied at the cloud. Pure pulls (batches without sections, such as the one
/// at start) pass through. Notify polls are refused, so the gateway only syncs when told.
struct HoldingProxy: Sendable {
    let upstream: String
    let http: HTTPClient
    /// Yields once for each batch the cloud has answered (and the gateway will never see).
    let applied: AsyncStream<Void>.Continuation
    /// Held answers are dropped (504) once this stream finishes.
    let release: AsyncStream<Void>

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.post("/v1/batches") { request, _ -> Response in
            var forward = HTTPClientRequest(url: upstream + "/v1/batches")
            forward.method = .POST
            for field in request.headers where ["authorization", "content-encoding", "content-type"].contains(field.name.canonicalName) {
                forward.headers.add(name: field.name.rawName, value: field.value)
            }
            let body = try await request.body.collect(upTo: 16 << 20)
            forward.body = .bytes(body)
            let answer = try await http.execute(forward, timeout: .seconds(30))
            let answerBody = try await answer.body.collect(upTo: 16 << 20)
            guard try Self.carriesChanges(body, coding: request.headers[.contentEncoding]) else {
                var headers: HTTPFields = [.contentType: "application/json"]
                if let coding = answer.headers.first(name: "Content-Encoding") { headers[.contentEncoding] = coding }
                return Response(status: .init(code: Int(answer.status.code)), headers: headers, body: .init(byteBuffer: answerBody))
            }
            applied.yield()
            for await _ in release {}
            return Response(status: .gatewayTimeout)
        }
        router.get("/v1/notify") { _, _ -> Response in
            Response(status: .serviceUnavailable, body: .init(byteBuffer: ByteBuffer(string: #"{"error":{"code":"shutting_down","message":"proxy"}}"#)))
        }
        return router
    }

    static func carriesChanges(_ body: ByteBuffer, coding: String?) throws -> Bool {
        let bytes = try InspectingProxy.decoded(body, coding: coding)
        return try !BatchRequest.decode(JSONParser.parse(bytes), maxRows: .max).sections.isEmpty
    }
}
