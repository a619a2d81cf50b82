import AsyncHTTPClient
import DallyConfig
import DallyCore
import DallyScheduler
import Logging
import NIOCore
import NIOSSL
import Synchronization

/// One way to reach the cloud at run time: its HTTP client (through its proxy, if any), its
/// availability and its counters.
final class Uplink: Sendable {
    let config: UplinkConfig
    let rules: UplinkRules
    let client: CloudClient
    private let state: Mutex<State>

    private struct State {
        var availability = Availability()
        var counters = UplinkCounters()
        /// Milliseconds since 1970 of the last exchange that got an answer: traffic that proves
        /// the uplink works, so a probe is not needed on top.
        var lastAnswerAt: Int64?
        /// Whether the last exchange or probe got no answer at all: the probe then looks
        /// again every `down_probe_interval`.
        var cloudSilent = false
        /// The cuts retried at once since the last completed cycle
        /// (``recordFailure(now:backoff:cutAfterAnswers:)``).
        var cutRetries = CutRetries()
        /// When (ms since 1970) a failure's retry was let go at once: that retry asks the cloud
        /// itself, so the down probe leaves it be (``leavesProbeToRetry(now:)``).
        var retryAtOnceAt: Int64?
        /// When (ms since 1970) the uplink last turned available or unavailable: how long a
        /// gateway has been cut off, or since when it has its cloud back.
        var availabilityChangedAt: Int64?
    }

    /// - Parameters:
    ///   - tls: how `https` URLs are checked and what certificate is presented (``tls(for:)``,
    ///     read once for every uplink).
    ///   - timer: the clock transfers are watched on.
    ///   - logger: where the uplink's moves between cloud nodes are told (``CloudNodes``).
    init(
        config: UplinkConfig, cost: Int, link: CloudLink, tls: TLSConfiguration, timer: TransferTimer,
        clock: CloudClockOffset, logger: Logger
    ) {
        self.config = config
        rules = UplinkRules(name: config.name, networkClass: config.networkClass, cost: cost, eager: config.eager)
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(
            idleTimeout: TimeAmount(config.timings.keepAlive), concurrentHTTP1ConnectionsPerHostSoftLimit: 4)
        // A refused connection fails its request at once. Left on, AsyncHTTPClient retries the
        // connection itself with a backoff that grows by 1.25× per failure up to a minute and
        // holds requests until it fires: after a long outage the gateway found the cloud back
        // only that much later, whatever `retry_max` and `probe_interval` say (the backlog's
        // first batch 1.7-3.1 s after the cloud came back from a 15 s outage). The uplink's
        // own retry and probe decide when to try again.
        configuration.connectionPool.retryConnectionEstablishment = false
        if let proxy = config.proxy { configuration.proxy = .server(host: proxy.host, port: proxy.port) }
        configuration.tlsConfiguration = tls
        var nodesLogger = logger
        nodesLogger[metadataKey: "uplink"] = "\(config.name)"
        client = CloudClient(
            http: HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration), link: link,
            watch: TransferWatch(timings: config.timings, model: LinkModel(), timer: timer),
            nodes: CloudNodes(urls: config.nodeURLs, returnAfter: link.retryMax, logger: nodesLogger),
            levels: LevelTrials(configured: link.level, cheapestClass: cost == 0), clock: clock)
        state = Mutex(State())
    }

    /// How an `https` uplink checks the cloud and presents itself: the system's roots or
    /// `[cloud] ca`, the client certificate when configured, verification off only when
    /// `insecure_skip_verify` says so.
    ///
    /// - Throws: when a PEM file cannot be read or parsed.
    static func tls(for link: CloudLink) throws -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let ca = link.certificateAuthority { tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(ca)) }
        if let client = link.clientCertificate {
            tls.certificateChain = try NIOSSLCertificate.fromPEMFile(client.certificate).map { .certificate($0) }
            tls.privateKey = .privateKey(try NIOSSLPrivateKey(file: client.key, format: .pem))
        }
        if link.insecureSkipVerify { tls.certificateVerification = .none }
        return tls
    }

    var name: String { config.name }
    var availability: Availability { state.withLock { $0.availability } }
    var counters: UplinkCounters { state.withLock { $0.counters } }
    var lastAnswerAt: Int64? { state.withLock { $0.lastAnswerAt } }
    /// Whether the cloud gave no answer to the last exchange or probe over this uplink.
    var cloudSilent: Bool { state.withLock { $0.cloudSilent } }

    func isUsable(at now: Int64) -> Bool { state.withLock { $0.availability.isUsable(at: now) } }

    /// Sets the override; returns whether availability changed.
    func setOverride(_ mode: AvailabilityOverride, now: Int64) -> Bool {
        change(now: now) { state in
            state.availability.override = mode
            // The OS (or an operator) says the network is there: try it at once.
            if mode == .available { state.availability.recordSuccess() }
        }
    }

    /// Records a probe's answer; returns whether availability changed.
    func recordProbe(up: Bool, now: Int64) -> Bool {
        change(now: now) { state in
            state.counters.probes += 1
            state.availability.probedUp = up
            state.cloudSilent = !up
            if up {
                state.lastAnswerAt = now
                state.availability.recordSuccess()
            } else {
                state.counters.probeFailures += 1
            }
        }
    }

    private func change(now: Int64, _ body: (inout State) -> Void) -> Bool {
        state.withLock { state in
            let before = state.availability.isAvailable
            body(&state)
            let changed = before != state.availability.isAvailable
            if changed {
                state.counters.availabilityChanges += 1
                state.availabilityChangedAt = now
            }
            return changed
        }
    }

    /// Records an exchange that got an answer.
    func recordAnswer(_ traffic: CloudClient.Traffic, now: Int64) {
        state.withLock { state in
            state.lastAnswerAt = now
            state.cloudSilent = false
            state.retryAtOnceAt = nil
            state.cutRetries.noteAnswer(bodyBytes: traffic.sentCompressed)
            state.availability.recordSuccess()
            state.counters.requests += 1
            state.counters.bytesUp += Int64(traffic.sentCompressed)
            state.counters.bytesDown += Int64(traffic.received)
        }
    }

    /// Notes that a request failed with `error`: when the cloud gave no answer
    /// (``CloudError/cloudDidNotAnswer``), the probe looks for it every `down_probe_interval`.
    func noteSilence(after error: any Error) {
        guard (error as? CloudError)?.cloudDidNotAnswer == true else { return }
        state.withLock { $0.cloudSilent = true }
    }

    /// Lets the next request go at once, without forgetting the failures counted so far.
    func endBackoff() { state.withLock { $0.availability.endBackoff() } }

    /// Records a failed exchange and starts (or extends) the backoff.
    ///
    /// - Parameter cutAfterAnswers: the connection dropped after the cloud had answered in the
    ///   same exchange: the link carried traffic a moment ago, and a resumed transfer loses
    ///   nothing it sent, so the retry goes at once instead of after `retry_min` (half a second
    ///   by default, as much as the cut cost on a 128,000 B/s link), as long as the link held
    ///   since the last retry at once as long as the backoff would have waited
    ///   (``CutRetries``): a link that cuts every attempt is paced by the backoff as before.
    func recordFailure(now: Int64, backoff: Backoff, cutAfterAnswers: Bool) -> (failures: Int, delay: Duration) {
        state.withLock { state in
            state.counters.requests += 1
            state.counters.failures += 1
            let failures = state.availability.failures + 1
            let atOnce = cutAfterAnswers && state.cutRetries.retryAtOnce(now: now, backoff: backoff)
            state.retryAtOnceAt = atOnce ? now : nil
            let delay = atOnce ? .zero : backoff.delay(afterFailures: failures, unit: Double.random(in: 0..<1))
            state.availability.recordFailure(at: now, delay: delay.milliseconds)
            return (failures, delay)
        }
    }

    /// Notes a cycle that completed: the next cut goes at once again.
    func recordCycleCompleted() {
        state.withLock { state in
            state.cutRetries.reset()
            state.retryAtOnceAt = nil
        }
    }

    /// Whether a failure's retry went at once less than `idle_timeout` ago and has not ended:
    /// its first request tells whether the cloud answers, so a down probe beside it would only
    /// add a request (paid for on a metered class) and a connection to the link. Bounded by
    /// `idle_timeout`, past which a silent retry is cut anyway, so that a retry that never
    /// started does not keep the probe away.
    func leavesProbeToRetry(now: Int64) -> Bool {
        state.withLock { state in
            guard let at = state.retryAtOnceAt else { return false }
            return now - at < config.timings.idleTimeout.milliseconds
        }
    }

    func count(_ update: (inout UplinkCounters) -> Void) { state.withLock { update(&$0.counters) } }

    func shutdown() async { try? await client.http.shutdown() }

    /// Throws when this uplink may not be used any more (its availability changed mid-transfer)
    /// or the engine is stopping: a transfer pauses there, and resumes at the next wake.
    func requireUsable(at now: Int64, stop: StopFlag) throws {
        if stop.isRaised { throw CancellationError() }
        guard isUsable(at: now) else { throw ObjectTransferError.uplinkWentAway(name) }
    }

    /// A snapshot for `/stats` and the admin API, as of `now`.
    func snapshot(at now: Int64) -> UplinkSnapshot {
        let (availability, counters, changedAt) = state.withLock {
            ($0.availability, $0.counters, $0.availabilityChangedAt)
        }
        let (node, moves) = client.nodes.position
        return UplinkSnapshot(
            name: name, networkClass: config.networkClass, url: config.url, node: node,
            override: availability.override,
            available: availability.isAvailable, availabilityChangedAt: changedAt,
            usable: availability.isUsable(at: now), retryAt: availability.retryAt,
            eager: config.eager,
            counters: counters.all + [("node_moves", moves)] + client.watch.model.estimate.counters,
            link: client.watch.model.estimate)
    }
}

extension [Uplink] {
    /// The cheapest uplink of one of `classes` usable at `now`, if any.
    func cheapestUsable(among classes: some Sequence<String>, at now: Int64) -> Uplink? {
        let classes = Set(classes)
        return filter { classes.contains($0.config.networkClass) && $0.isUsable(at: now) }
            .min { $0.rules.cost < $1.rules.cost }
    }
}
