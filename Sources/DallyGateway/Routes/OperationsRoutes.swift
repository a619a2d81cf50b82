import DallyHTTP
import DallyCore
import Hummingbird

/// `GET /healthz` (no token), `GET /stats` and `GET /metrics` (admin token).
struct OperationsRoutes: Sendable {
    let authorizer: Authorizer
    let stats: GatewayStats

    func register(on router: Router<DallyRequestContext>) {
        router.get("/healthz") { _, _ in
            JSONResponse.healthy
        }
        router.get("/stats") { request, _ in
            try authorizer.requireAdmin(request)
            return try JSONResponse.encoded(try await stats.document())
        }
        router.get("/metrics") { request, _ in
            try authorizer.requireAdmin(request)
            return Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: try await stats.prometheus()))
            )
        }
    }
}
