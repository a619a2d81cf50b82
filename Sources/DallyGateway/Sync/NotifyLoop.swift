import DallyScheduler
import DallySync

extension Syncer {
    /// Holds one notify long-poll at the cloud, over the cheapest usable uplink whose class
    /// `notify_networks` allows (none allowed: downloads go by their periods only). A table
    /// that changed elsewhere is marked for a pull, which the scheduler sends over that
    /// table's own download networks.
    func notifyLoop() async {
        guard !notifyClasses.isEmpty else { return }
        // Versions already notified: a table that cannot be pulled yet (its networks are
        // down) must not make every next poll return at once.
        var notified: [String: Int64] = [:]
        var failures = 0
        while !stopped {
            guard let uplink = notifyUplink() else {
                await waitForUplink()
                continue
            }
            do {
                var cursors = try await store.cloudCursors()
                cursors.entries = cursors.entries.map { ($0.table, max($0.version, notified[$0.table] ?? 0)) }
                state.withLock { $0.status.notifyConnected = true }
                uplink.count { $0.notifyPolls += 1 }
                let (changed, received) = try await uplink.client.notify(
                    versions: cursors, replica: store.replicaID, wait: link.notifyWait)
                uplink.recordAnswer(CloudClient.Traffic(received: received), now: now())
                failures = 0
                guard !changed.isEmpty else { continue }
                for entry in changed.entries { notified[entry.table] = max(notified[entry.table] ?? 0, entry.version) }
                state.withLock { state in
                    state.status.notifications += 1
                    state.urgentPulls.formUnion(changed.entries.map(\.table))
                }
                poke()
            } catch {
                state.withLock { $0.status.notifyConnected = false }
                failures += 1
                let delay = backoff.delay(afterFailures: failures, unit: Double.random(in: 0..<1))
                logger.debug(
                    "notify long-poll failed",
                    metadata: ["uplink": "\(uplink.name)", "error": "\(error)", "retry_in": "\(delay)"])
                guard await sleep(for: delay) else { return }
            }
        }
    }

    private func notifyUplink() -> Uplink? {
        let now = self.now()
        return uplinks.filter { notifyClasses.contains($0.config.networkClass) && $0.isUsable(at: now) }
            .min { $0.rules.cost < $1.rules.cost }
    }

    /// Waits until availability changes, or until the first backoff among the notify
    /// uplinks ends.
    private func waitForUplink() async {
        state.withLock { $0.status.notifyConnected = false }
        let now = self.now()
        let retry = uplinks.filter { notifyClasses.contains($0.config.networkClass) }
            .compactMap { uplink -> Int64? in
                let availability = uplink.availability
                return availability.isAvailable ? availability.retryAt : nil
            }.min()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.availabilityChanged.wait() }
            if let retry {
                let deadline = clock.now.advanced(by: .milliseconds(max(0, retry - now)))
                group.addTask { _ = await self.sleep(until: deadline) }
            }
            await group.next()
            group.cancelAll()
        }
    }

    /// Probes an uplink's cloud every `probe_interval`, unless other traffic proved it works
    /// within the interval: the probe never wakes a radio more often than configured.
    func probeLoop(_ uplink: Uplink) async {
        guard let interval = uplink.config.probeInterval else { return }
        while await sleep(for: interval), !stopped {
            guard uplink.availability.override == .auto else { continue }
            let now = self.now()
            if let last = uplink.lastAnswerAt, now - last < interval.milliseconds, uplink.availability.probedUp {
                continue
            }
            let up = await uplink.client.probe(timeout: min(link.requestTimeout, interval))
            if uplink.recordProbe(up: up, now: self.now()) {
                availabilityDidChange(uplink, cause: up ? "probe answered" : "probe failed")
            } else if up {
                poke()
            }
        }
    }
}
