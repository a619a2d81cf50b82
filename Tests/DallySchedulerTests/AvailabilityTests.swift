import DallyScheduler
import Testing

/// An uplink's availability: the override beats the probe, and a backoff keeps an available
/// uplink unusable until its retry time.
@Suite("Availability")
struct AvailabilityTests {
    @Test func aFreshUplinkIsUpAndUsable() {
        let availability = Availability()
        #expect(availability.override == .auto)
        #expect(availability.probedUp)
        #expect(availability.isAvailable)
        #expect(availability.isUsable(at: 0))
        #expect(availability.failures == 0)
        #expect(availability.retryAt == nil)
    }

    @Test(arguments: [
        (AvailabilityOverride.auto, true, true),
        (.auto, false, false),
        (.available, true, true),
        (.available, false, true),
        (.unavailable, true, false),
        (.unavailable, false, false),
    ])
    func theOverrideBeatsTheProbe(override: AvailabilityOverride, probedUp: Bool, available: Bool) {
        var availability = Availability()
        availability.override = override
        availability.probedUp = probedUp
        #expect(availability.isAvailable == available)
        #expect(availability.isUsable(at: Fixture.start) == available)
    }

    @Test func overridesKeepTheirConfigNames() {
        #expect(AvailabilityOverride.allCases.map(\.rawValue) == ["available", "unavailable", "auto"])
        #expect(AvailabilityOverride(rawValue: "auto") == .auto)
        #expect(AvailabilityOverride(rawValue: "on") == nil)
    }

    @Test func aFailureBacksOffUntilExactlyTheRetryTime() {
        var availability = Availability()
        availability.recordFailure(at: Fixture.start, delay: 5_000)
        #expect(availability.failures == 1)
        #expect(availability.retryAt == Fixture.start + 5_000)
        #expect(availability.isAvailable)
        #expect(!availability.isUsable(at: Fixture.start))
        #expect(!availability.isUsable(at: Fixture.start + 4_999))
        #expect(availability.isUsable(at: Fixture.start + 5_000))
        #expect(availability.isUsable(at: Fixture.start + 60_000))

        // A second failure counts, and the retry moves to the new time.
        availability.recordFailure(at: Fixture.start + 5_000, delay: 10_000)
        #expect(availability.failures == 2)
        #expect(availability.retryAt == Fixture.start + 15_000)
        #expect(!availability.isUsable(at: Fixture.start + 14_999))
        #expect(availability.isUsable(at: Fixture.start + 15_000))
    }

    @Test func aSuccessEndsTheBackoff() {
        var availability = Availability()
        availability.recordFailure(at: Fixture.start, delay: 5_000)
        availability.recordFailure(at: Fixture.start, delay: 5_000)
        availability.recordSuccess()
        #expect(availability.failures == 0)
        #expect(availability.retryAt == nil)
        #expect(availability.isUsable(at: Fixture.start))
    }

    /// A backoff ending does not make an uplink the override or the probe took down usable.
    @Test func theBackoffEndingDoesNotOverrideDown() {
        var availability = Availability()
        availability.recordFailure(at: Fixture.start, delay: 1_000)
        availability.override = .unavailable
        #expect(!availability.isUsable(at: Fixture.start + 2_000))
        availability.override = .auto
        availability.probedUp = false
        #expect(!availability.isUsable(at: Fixture.start + 2_000))
        availability.probedUp = true
        #expect(availability.isUsable(at: Fixture.start + 2_000))
        // Override available still waits out the backoff.
        availability.override = .available
        availability.recordFailure(at: Fixture.start + 2_000, delay: 1_000)
        #expect(!availability.isUsable(at: Fixture.start + 2_500))
        #expect(availability.isUsable(at: Fixture.start + 3_000))
    }
}
