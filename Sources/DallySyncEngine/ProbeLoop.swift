import DallyConfig
import DallyScheduler

/// Probes one uplink's cloud every `probe_interval`, unless other traffic proved it works
/// within the interval: the probe never wakes a radio more often than configured.
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
        while await clock.pause(for: interval), !stop.isRaised {
            guard uplink.availability.override == .auto else { continue }
            let now = self.now()
            if let last = uplink.lastAnswerAt, now - last < interval.milliseconds, uplink.availability.probedUp {
                continue
            }
            let up = await uplink.client.probe(timeout: min(requestTimeout, interval))
            if uplink.recordProbe(up: up, now: self.now()) {
                availabilityChanged(uplink, up ? "probe answered" : "probe failed")
            } else if up {
                poke()
            }
        }
    }
}
