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
/// smaller is sent; the bodies between go at the level that won. A trial never sends more
/// bytes than the configured level would; between trials a body costs at most what its
/// table's traffic drifted since the last. Small bodies (under ``minimumBytes``) always go at
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

    /// How one body goes.
    enum Plan: Equatable, Sendable {
        /// At this level.
        case level(Int)
        /// At both levels, the smaller sent and its level recorded (``record(tables:configuredBytes:fastBytes:)``).
        case trial
    }

    private struct Verdict {
        var level: Int
        var bodiesSince = 0
    }

    /// The uplink's `level`.
    let configured: Int
    private let verdicts = Mutex<[String: Verdict]>([:])

    init(configured: Int) {
        self.configured = configured
    }

    /// How a body of `bytes`, with sections of `tables`, goes: at level 1 only when every one
    /// of its tables was last found no larger there.
    func plan(bytes: Int, tables: [String]) -> Plan {
        guard configured > Self.fastLevel, bytes >= Self.minimumBytes, !tables.isEmpty else { return .level(configured) }
        return verdicts.withLock { verdicts in
            var level = Self.fastLevel
            for table in tables {
                guard let verdict = verdicts[table], verdict.bodiesSince < Self.retrialEvery else { return .trial }
                if verdict.level != Self.fastLevel { level = configured }
            }
            for table in tables { verdicts[table]?.bodiesSince += 1 }
            return .level(level)
        }
    }

    /// Records a trial of a body with sections of `tables`: its size at the configured level
    /// and at level 1. Returns the level whose output to send, the smaller (level 1 on a tie).
    func record(tables: [String], configuredBytes: Int, fastBytes: Int) -> Int {
        let level = fastBytes <= configuredBytes ? Self.fastLevel : configured
        verdicts.withLock { verdicts in
            for table in tables { verdicts[table] = Verdict(level: level) }
        }
        return level
    }
}
