import Synchronization

/// The zstd level each table's large batch bodies go at: the configured one, or level 1 where
/// a trial showed level 1 makes them no larger.
///
/// Level 1 compresses three to four times faster than the default 6, and on some traffic it is
/// as small or smaller: random ids, hex and other high-entropy text (a drain's 5,000-row
/// section of uuid ids 4 % smaller at level 1, wide rows of hex notes 6 %; docs/BENCHMARKS.md),
/// where level 6's deeper search finds nothing level 1 misses. On repetitive text level 6 wins
/// by up to 9 %. So a table's level is measured on its own traffic, not assumed: its first
/// large body, and one in every ``retrialEvery`` after, is compressed at both levels and the
/// smaller is sent; the bodies between go at the level that won. On a LAN (an uplink of the
/// cheapest network class measured at ``lanBytesPerSecond`` or faster) a near tie goes to level
/// 1: up to ``lanSlackPermille`` more bytes for a quarter of the CPU, where a byte costs nothing
/// and the CPU bounds a catch-up (a 100,000-row backlog's rows came out 0.4 % larger at level 1,
/// and level 6 took a tenth of the gateway's CPU; docs/BENCHMARKS.md). Elsewhere (a metered
/// class, or a ship whose only class is its satellite) a trial never sends more bytes than the
/// configured level would. Between trials a body costs at most what its table's traffic
/// drifted since the last. Small bodies (under ``minimumBytes``) always go at
/// the configured level: they cost little CPU, and their dictionaries pay most there.
///
/// ```swift
/// switch trials.plan(bytes: body.count, tables: ["orders"]) {
/// case .level(let level): send(compress(body, level))
/// case .trial:
///     let (configured, fast) = (compress(body, 6), compress(body, LevelTrials.fastLevel))
///     let level = trials.record(tables: ["orders"], configuredBytes: configured.count, fastBytes: fast.count)
///     send(level == LevelTrials.fastLevel ? fast : configured)
/// }
/// ```
final class LevelTrials: Sendable {
    /// The level tried against the configured one.
    static let fastLevel = 1
    /// Bodies smaller than this go at the configured level, untried: their CPU is little, and a
    /// wake's opening batch on an unmeasured link is sized to compress to just over what
    /// measures the link (``LinkModel/openingBatchRows(_:)``), which level 1 could take under.
    static let minimumBytes = 64 * 1024
    /// A table's level is tried again after this many large bodies went at its verdict.
    static let retrialEvery = 16
    /// How much larger (in thousandths) level 1's output may be and still win, on a LAN.
    static let lanSlackPermille = 10
    /// The measured upload rate from which an uplink of the cheapest class counts as a LAN:
    /// 4 Mbit/s, above the satellite and narrow-band links Dally meets (2-128 kB/s) and below
    /// what a LAN measures even with the cloud busy (a loopback drain measured 1.2 MB/s: the
    /// rate is taken from whole exchanges, the cloud's reading included).
    static let lanBytesPerSecond = 500_000.0

    /// How one body goes.
    enum Plan: Equatable, Sendable {
        /// At this level.
        case level(Int)
        /// At both levels, the chosen one sent (``record(tables:configuredBytes:fastBytes:linkBytesPerSecond:)``).
        case trial
    }

    private struct Verdict {
        /// Level 1's output against the configured level's, in thousandths, at the last trial:
        /// kept as measured, so that whether a near tie goes to level 1 follows the link as it
        /// is measured at each body (a gateway's first trial comes before its link is measured).
        var fastPermille: Int
        var bodiesSince = 0
    }

    /// The uplink's `level`.
    let configured: Int
    /// Whether the uplink is of the cheapest network class: only there can it count as a LAN.
    let cheapestClass: Bool
    private let verdicts = Mutex<[String: Verdict]>([:])

    init(configured: Int, cheapestClass: Bool = false) {
        self.configured = configured
        self.cheapestClass = cheapestClass
    }

    /// How a body of `bytes`, with sections of `tables`, goes over a link measured at
    /// `linkBytesPerSecond` (nil: not yet): at level 1 only when every one of its tables was
    /// last found no larger there (or within the LAN's slack).
    func plan(bytes: Int, tables: [String], linkBytesPerSecond: Double? = nil) -> Plan {
        guard configured > Self.fastLevel, bytes >= Self.minimumBytes, !tables.isEmpty else { return .level(configured) }
        let allowed = allowedPermille(linkBytesPerSecond)
        return verdicts.withLock { verdicts in
            var level = Self.fastLevel
            for table in tables {
                guard let verdict = verdicts[table], verdict.bodiesSince < Self.retrialEvery else { return .trial }
                if verdict.fastPermille > allowed { level = configured }
            }
            for table in tables { verdicts[table]?.bodiesSince += 1 }
            return .level(level)
        }
    }

    /// Records a trial of a body with sections of `tables`: its size at the configured level
    /// and at level 1. Returns the level whose output to send: level 1 when no larger (or
    /// within the LAN's slack), else the configured one.
    func record(tables: [String], configuredBytes: Int, fastBytes: Int, linkBytesPerSecond: Double? = nil) -> Int {
        let permille = configuredBytes > 0 ? Int((Double(fastBytes) * 1000 / Double(configuredBytes)).rounded(.up)) : 1000
        verdicts.withLock { verdicts in
            for table in tables { verdicts[table] = Verdict(fastPermille: permille) }
        }
        return permille <= allowedPermille(linkBytesPerSecond) ? Self.fastLevel : configured
    }

    /// The largest ratio (in thousandths) at which level 1 wins on a link measured at `rate`.
    private func allowedPermille(_ rate: Double?) -> Int {
        guard cheapestClass, let rate, rate >= Self.lanBytesPerSecond else { return 1000 }
        return 1000 + Self.lanSlackPermille
    }
}
