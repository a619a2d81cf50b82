import DallyConfig
import DallyScheduler

/// Probes one uplink's cloud every `probe_interval`, unless other traffic proved it works
/// within the interval: the probe never wakes a radio more often than configured.
///
/// While the cloud gives no answer over the uplink (the last probe failed, or the last
/// request got no answer), it probes every `down_probe_interval` instead, so that a gateway
/// finds its cloud back within a fraction of a second of an outage's end on a LAN, where a
/// failed probe is a refused connection, and catches up at once.
struct ProbeLoop<C: Clock>: Sendable where C.Duration == Duration {
    let uplink: Uplink
    let requestTimeout: Duration
    let clock: C
    let now: @Sendable () -> Int64
    let stop: StopFlag
    /// Told when the probe changed the uplink's availability, with why.
    let availabilityChanged: @Sendable (Uplink, String) -> Void
    /// Asks the decision loop for a new decision (a probe that answered may end a backoff).
    let poke: @Sendable () -> Void

    func run() async {
        guard let interval = uplink.config.probeInterval else { return }
        // The loop wakes every `tick` to see whether the cloud went silent meanwhile; with no
        // shorter interval configured it wakes once per `probe_interval`, as it always did.
        let tick = min(uplink.config.downProbeInterval ?? interval, interval)
        var lastProbe = clock.now
        var wake = clock.now
        while true {
            // Wakes keep their rhythm while the loop keeps up; after a probe that outlasted a
            // tick (a cloud that drops packets), the next wake is a tick away, not at once.
            wake = wake.advanced(by: tick)
            if wake.advanced(by: tick) < clock.now { wake = clock.now.advanced(by: tick) }
            guard await clock.pause(until: wake), !stop.isRaised else { return }
            guard uplink.availability.override == .auto else { continue }
            let silent = uplink.cloudSilent
            guard silent || lastProbe.duration(to: clock.now) >= interval else { continue }
            // A cut's retry that went at once is itself the question the probe would ask.
            if silent, uplink.leavesProbeToRetry(now: self.now()) { continue }
            lastProbe = clock.now
            let now = self.now()
            if !silent, let last = uplink.lastAnswerAt, now - last < interval.milliseconds, uplink.availability.probedUp {
                continue
            }
            await probe(timeout: min(requestTimeout, interval), silent: silent)
        }
    }

    /// Whether the uplink is down by its probe (and followed by it): what ``probeNow()`` is for.
    var isDownByProbe: Bool {
        let availability = uplink.availability
        return uplink.config.probeInterval != nil && availability.override == .auto && !availability.probedUp
    }

    /// Probes once now, outside the loop's rhythm: a sync-now over an uplink its probe found
    /// down, since the cloud may be back and the next probe up to `down_probe_interval` away
    /// (on a metered class, `probe_interval`). The operator asked for traffic: one probe is it.
    func probeNow() async {
        await probe(timeout: min(requestTimeout, uplink.config.probeInterval ?? requestTimeout), silent: uplink.cloudSilent)
    }

    private func probe(timeout: Duration, silent: Bool) async {
        // Through a proxy the connection is the proxy's, which accepts whether or not the
        // cloud is there: only the HTTP request can tell.
        let up = await uplink.client.probe(timeout: timeout, knockFirst: silent && uplink.config.proxy == nil)
        if uplink.recordProbe(up: up, now: now()) {
            availabilityChanged(uplink, up ? "probe answered" : "probe failed")
        } else if up {
            poke()
        }
    }
}
