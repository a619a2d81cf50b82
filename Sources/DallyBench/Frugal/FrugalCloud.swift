import DallyCloud
import DallyConfig
import DallyFrugal
import DallyTestSupport
import Foundation
import Logging

/// A cloud on a free loopback port with two counting relays in front of it, `wifi` and
/// `cellular`: whatever reaches the cloud through them is counted at the socket.
struct FrugalCloud {
    let cloud: Cloud<ContinuousClock>
    let services: ServiceRunner
    let wifi: CountingRelay
    let cellular: CountingRelay
    let wifiPort: Int
    let cellularPort: Int

    static func start(directory: String, trace: FrugalTrace, now: @escaping @Sendable () -> Int64) async throws
        -> FrugalCloud
    {
        let cloud = try Cloud(config: try FrugalSetup.cloud(directory: directory, trace: trace), logger: Logger(label: "frugal.cloud"))
        let services: ServiceRunner
        do {
            services = try await ServiceRunner.bench(servers: 1) { report in
                cloud.services(port: 0) { port in await report(0, port) }
            }
        } catch {
            try? cloud.store.close()
            throw error
        }
        let wifi = CountingRelay(name: "wifi", now: now)
        let cellular = CountingRelay(name: "cellular", now: now)
        let ports: (Int, Int)
        do {
            ports = (
                try await wifi.start(upstreamHost: "127.0.0.1", upstreamPort: services.ports[0]),
                try await cellular.start(upstreamHost: "127.0.0.1", upstreamPort: services.ports[0])
            )
        } catch {
            try? await services.stop()
            try? cloud.store.close()
            throw error
        }
        return FrugalCloud(
            cloud: cloud, services: services, wifi: wifi, cellular: cellular, wifiPort: ports.0, cellularPort: ports.1)
    }

    func relay(_ networkClass: String) -> CountingRelay { networkClass == "wifi" ? wifi : cellular }

    func stop() async throws {
        try? await wifi.stop()
        try? await cellular.stop()
        try await services.stop()
        try cloud.store.close()
    }
}
