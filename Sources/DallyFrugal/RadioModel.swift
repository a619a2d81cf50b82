/// A cellular radio's power states, to turn "when did bytes move" into wake-ups and joules.
///
/// The model is LTE's RRC state machine as measured by Huang et al. (MobiSys 2012), simplified
/// to the three states that decide a sync protocol's cost:
///
/// - **IDLE** draws about nothing. Activity that finds the radio idle *wakes* it: a promotion to
///   CONNECTED takes ``promotionMillis`` (260 ms) at ``promotionWatts`` (1.21 W) before any
///   byte moves.
/// - **CONNECTED, transferring**: bytes move at ``uplinkBitsPerSecond`` (5 Mbit/s) up and
///   ``downlinkBitsPerSecond`` (20 Mbit/s) down, one direction after the other (a request, then
///   its answer), at ``transferWatts`` (1.21 W). Activity that arrives while a transfer is
///   still running queues behind it.
/// - **CONNECTED, tail**: after the last transfer the radio stays connected for ``tailMillis``
///   (10 s) at ``tailWatts`` (1.1 W), waiting for more; new activity within the tail is sent
///   at once, without a promotion, and restarts the tail. After the tail, IDLE again.
///
/// The tail is why many small sends cost far more than their bytes: each lone request keeps
/// the radio up for 10 s, so a protocol that sends once a minute pays ~11 J a minute whatever
/// it sends. Byte rates are parameters because they vary by cell; the state timings and
/// powers are the published ones.
public struct RadioModel: Sendable, Equatable {
    public var promotionMillis: Double
    public var promotionWatts: Double
    public var transferWatts: Double
    public var uplinkBitsPerSecond: Double
    public var downlinkBitsPerSecond: Double
    public var tailMillis: Double
    public var tailWatts: Double

    public init(
        promotionMillis: Double = 260, promotionWatts: Double = 1.21, transferWatts: Double = 1.21,
        uplinkBitsPerSecond: Double = 5_000_000, downlinkBitsPerSecond: Double = 20_000_000,
        tailMillis: Double = 10_000, tailWatts: Double = 1.1
    ) {
        self.promotionMillis = promotionMillis
        self.promotionWatts = promotionWatts
        self.transferWatts = transferWatts
        self.uplinkBitsPerSecond = uplinkBitsPerSecond
        self.downlinkBitsPerSecond = downlinkBitsPerSecond
        self.tailMillis = tailMillis
        self.tailWatts = tailWatts
    }

    /// The published LTE figures with a 5 Mbit/s uplink and a 20 Mbit/s downlink.
    public static let lte = RadioModel()

    /// How long moving these bytes keeps the radio transferring, in milliseconds.
    public func transferMillis(bytesUp: Int, bytesDown: Int) -> Double {
        Double(bytesUp) * 8_000 / uplinkBitsPerSecond + Double(bytesDown) * 8_000 / downlinkBitsPerSecond
    }

    /// The usage of one radio that carried `events` (in any order; simultaneous events are
    /// taken in the order given). The last event's tail is counted in full: the radio runs it
    /// out after the trace as it would anywhere.
    public func usage(of events: [RadioEvent]) -> RadioUsage {
        let ordered = events.enumerated().sorted { a, b in
            a.element.at != b.element.at ? a.element.at < b.element.at : a.offset < b.offset
        }
        var usage = RadioUsage()
        var promotion = 0.0
        var transfer = 0.0
        // When the last transfer ends; nil while the radio has never been used.
        var busyUntil: Double?
        for (_, event) in ordered {
            let at = Double(event.at)
            var start = at
            if let end = busyUntil, at - end <= tailMillis {
                // Still connected: in the tail (which this activity cuts short) or still
                // transferring (this activity waits its turn).
                if at > end { usage.tailMillis += at - end } else { start = end }
            } else {
                if busyUntil != nil { usage.tailMillis += tailMillis }
                usage.wakeUps += 1
                promotion += promotionMillis
                start = at + promotionMillis
            }
            let duration = transferMillis(bytesUp: event.bytesUp, bytesDown: event.bytesDown)
            transfer += duration
            busyUntil = start + duration
        }
        if busyUntil != nil { usage.tailMillis += tailMillis }
        usage.activeMillis = promotion + transfer
        usage.energyJoules =
            (promotion * promotionWatts + transfer * transferWatts + usage.tailMillis * tailWatts) / 1000
        return usage
    }

    /// The usage of several radios, one per distinct key (per client, say), summed: the total
    /// cost to a fleet whose members each have their own radio. Radios are summed in the order
    /// their keys first appear, so the total is the same on every run.
    public func totalUsage<Key: Hashable>(of events: [(radio: Key, event: RadioEvent)]) -> RadioUsage {
        let (order, grouped) = group(events)
        return order.reduce(RadioUsage()) { total, key in total + usage(of: grouped[key] ?? []) }
    }

    /// The usage of each radio among `events`, by key.
    public func usageByRadio<Key: Hashable>(of events: [(radio: Key, event: RadioEvent)]) -> [Key: RadioUsage] {
        group(events).events.mapValues { usage(of: $0) }
    }

    private func group<Key: Hashable>(
        _ events: [(radio: Key, event: RadioEvent)]
    ) -> (order: [Key], events: [Key: [RadioEvent]]) {
        var order: [Key] = []
        var grouped: [Key: [RadioEvent]] = [:]
        for (radio, event) in events {
            if grouped[radio] == nil { order.append(radio) }
            grouped[radio, default: []].append(event)
        }
        return (order, grouped)
    }
}

/// Bytes that moved over a radio at one moment.
public struct RadioEvent: Sendable, Equatable {
    /// Milliseconds (of the trace's clock).
    public var at: Int64
    public var bytesUp: Int
    public var bytesDown: Int

    public init(at: Int64, bytesUp: Int, bytesDown: Int) {
        self.at = at
        self.bytesUp = bytesUp
        self.bytesDown = bytesDown
    }
}

extension RadioEvent {
    /// What a relay saw on one connection in one millisecond, as radio activity.
    public init(_ activity: RelayActivity) {
        self.init(at: activity.at, bytesUp: activity.bytesUp, bytesDown: activity.bytesDown)
    }
}

/// What a radio (or a fleet of radios, summed) spent.
public struct RadioUsage: Sendable, Equatable {
    /// Activities that found the radio idle and had to promote it: the first, and any that
    /// came more than the tail after the end of the previous transfer.
    public var wakeUps = 0
    /// Milliseconds promoting or transferring.
    public var activeMillis = 0.0
    /// Milliseconds connected with nothing to send, waiting out the tail.
    public var tailMillis = 0.0
    public var energyJoules = 0.0

    public init(wakeUps: Int = 0, activeMillis: Double = 0, tailMillis: Double = 0, energyJoules: Double = 0) {
        self.wakeUps = wakeUps
        self.activeMillis = activeMillis
        self.tailMillis = tailMillis
        self.energyJoules = energyJoules
    }

    /// Milliseconds the radio was out of IDLE.
    public var connectedMillis: Double { activeMillis + tailMillis }

    public static func + (a: RadioUsage, b: RadioUsage) -> RadioUsage {
        RadioUsage(
            wakeUps: a.wakeUps + b.wakeUps, activeMillis: a.activeMillis + b.activeMillis,
            tailMillis: a.tailMillis + b.tailMillis, energyJoules: a.energyJoules + b.energyJoules)
    }
}
