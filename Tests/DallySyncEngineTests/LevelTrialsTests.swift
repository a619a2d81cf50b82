import Testing

@testable import DallySyncEngine

/// A table's large bodies go at level 1 only where a trial found level 1 no larger, tried
/// again every ``LevelTrials/retrialEvery`` bodies; small bodies and a configured level 1 are
/// never tried.
@Suite("LevelTrials")
struct LevelTrialsTests {
    static let large = LevelTrials.minimumBytes

    @Test func aTableIsTriedFirstThenGoesAtTheLevelThatWonUntilItsNextTrial() {
        let trials = LevelTrials(configured: 6)
        #expect(trials.plan(bytes: Self.large, tables: ["orders"]) == .trial)
        // Level 1 as small: level 1 it is.
        #expect(trials.record(tables: ["orders"], configuredBytes: 1_000, fastBytes: 1_000) == 1)
        for _ in 0..<LevelTrials.retrialEvery {
            #expect(trials.plan(bytes: Self.large, tables: ["orders"]) == .level(1))
        }
        #expect(trials.plan(bytes: Self.large, tables: ["orders"]) == .trial)
        // Level 1 a byte larger: back to the configured level.
        #expect(trials.record(tables: ["orders"], configuredBytes: 1_000, fastBytes: 1_001) == 6)
        #expect(trials.plan(bytes: Self.large, tables: ["orders"]) == .level(6))
    }

    @Test func aBodyGoesAtLevelOneOnlyWhenEveryTableOfItDoes() {
        let trials = LevelTrials(configured: 6)
        _ = trials.record(tables: ["ids"], configuredBytes: 900, fastBytes: 850)
        _ = trials.record(tables: ["notes"], configuredBytes: 900, fastBytes: 950)
        #expect(trials.plan(bytes: Self.large, tables: ["ids"]) == .level(1))
        #expect(trials.plan(bytes: Self.large, tables: ["ids", "notes"]) == .level(6))
        // A table never tried makes the body a trial.
        #expect(trials.plan(bytes: Self.large, tables: ["ids", "telemetry"]) == .trial)
    }

    /// On a LAN (the cheapest class, measured fast) a near tie goes to level 1; on a slow or
    /// unmeasured link, or another class, level 1 must be no larger. The verdict follows the
    /// link as it is measured at each body.
    @Test func onALANLevelOneWinsANearTie() {
        let lan = LevelTrials(configured: 6, cheapestClass: true)
        let fast = LevelTrials.lanBytesPerSecond
        // The first trial, before the link is measured: strict.
        #expect(lan.record(tables: ["orders"], configuredBytes: 131_925, fastBytes: 132_462) == 6)
        #expect(lan.plan(bytes: Self.large, tables: ["orders"]) == .level(6))
        // Measured as a LAN now: the same verdict sends level 1.
        #expect(lan.plan(bytes: Self.large, tables: ["orders"], linkBytesPerSecond: fast) == .level(1))
        #expect(lan.plan(bytes: Self.large, tables: ["orders"], linkBytesPerSecond: 128_000) == .level(6))
        // More than 1 % larger: the configured level, however fast the link.
        #expect(lan.record(tables: ["items"], configuredBytes: 100_000, fastBytes: 101_001, linkBytesPerSecond: fast) == 6)
        #expect(lan.plan(bytes: Self.large, tables: ["items"], linkBytesPerSecond: fast) == .level(6))

        let dearer = LevelTrials(configured: 6)
        #expect(dearer.record(tables: ["orders"], configuredBytes: 131_925, fastBytes: 131_926, linkBytesPerSecond: fast) == 6)
        #expect(dearer.record(tables: ["orders"], configuredBytes: 131_925, fastBytes: 131_925, linkBytesPerSecond: fast) == 1)
    }

    @Test func smallBodiesAndAConfiguredLevelOneAreNeverTried() {
        let trials = LevelTrials(configured: 6)
        #expect(trials.plan(bytes: Self.large - 1, tables: ["orders"]) == .level(6))
        #expect(trials.plan(bytes: Self.large, tables: []) == .level(6))
        #expect(LevelTrials(configured: 1).plan(bytes: Self.large, tables: ["orders"]) == .level(1))
        #expect(LevelTrials(configured: 19).plan(bytes: Self.large, tables: ["orders"]) == .trial)
    }
}
