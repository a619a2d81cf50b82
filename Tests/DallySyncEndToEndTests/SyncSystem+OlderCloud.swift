import DallyGateway
import DallyTestSupport
import Logging

extension SyncSystem {
    /// Starts gateway `id` on a cloud from before `GET /v1/tables`: an ``InspectingProxy`` that
    /// answers that route `404` as such a cloud does and passes the rest on, stopped with the
    /// system.
    func startGatewayOnAnOlderCloud(_ id: String, logger: Logger? = nil) async throws {
        let olderCloud = InspectingProxy(upstream: "", http: http)
        try await olderCloud.start(upstream: "http://127.0.0.1:\(cloudServer.port)")
        proxies.withLock { $0.append(olderCloud) }
        olderCloud.refuseDeclarations(true)
        var config = try gatewayConfig(id)
        config.cloud?.url = olderCloud.url
        for i in config.uplinks.indices { config.uplinks[i].url = olderCloud.url }
        if let logger {
            try await live.startGateway(id, Gateway(config: config, logger: logger))
        } else {
            try await live.startGateway(id, config)
        }
    }
}
