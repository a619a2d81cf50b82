import DallyGateway
import DallyTestSupport

extension SyncSystem {
    /// Starts gateway `id` with `count` cloud nodes listed in its `url`s: each an
    /// ``InspectingProxy`` in front of the one cloud (a node can then be made to fail, or to
    /// answer as a node on another configuration), stopped with the system. Returns them in
    /// the order listed. Requests stay on the node they moved to for a minute (`retry_max`)
    /// before trying the first again.
    func startGatewayOnNodes(_ id: String, count: Int) async throws -> [InspectingProxy] {
        var nodes: [InspectingProxy] = []
        for _ in 0..<count {
            let node = InspectingProxy(upstream: "", http: http)
            try await node.start(upstream: "http://127.0.0.1:\(cloudServer.port)")
            proxies.withLock { $0.append(node) }
            nodes.append(node)
        }
        var config = try gatewayConfig(id)
        config.cloud?.url = nodes[0].url
        config.cloud?.standbyURLs = nodes.dropFirst().map(\.url)
        config.cloud?.retryMax = .seconds(60)
        for i in config.uplinks.indices {
            config.uplinks[i].url = nodes[0].url
            config.uplinks[i].standbyURLs = nodes.dropFirst().map(\.url)
        }
        try await live.startGateway(id, config)
        return nodes
    }
}
