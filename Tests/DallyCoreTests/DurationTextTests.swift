import DallyCore
import Testing

@Suite("DurationText")
struct DurationTextTests {
    @Test(arguments: [
        ("250ms", Duration.milliseconds(250)),
        ("30s", .seconds(30)),
        ("5m", .seconds(300)),
        ("1h", .seconds(3_600)),
        ("1h30m", .seconds(5_400)),
        ("2d", .seconds(172_800)),
        ("0s", .zero),
        ("0ms", .zero),
        ("1d2h3m4s5ms", .milliseconds(93_784_005)),
        ("1m500ms", .milliseconds(60_500)),
        ("90s", .seconds(90)),
        ("1500ms", .milliseconds(1_500)),
        ("007s", .seconds(7)),
        ("3649d", .seconds(3_649 * 86_400)),
    ])
    func accepted(_ text: String, _ expected: Duration) {
        #expect(DurationText.parse(text) == expected)
    }

    @Test(arguments: [
        "", "5", "5x", "1m1h", "1s1s", "1h1h", "ms", "s", "h5", "5 s", " 5s", "5s ", "-5s", "+5s", "5S", "5MS",
        "1.5s", "5sec", "5min", "5s5", "1w", "1ms1s", "1s1m", "5µs",
        // Ten years or more, and numbers too long to be a duration.
        "3650d", "87600h", "1000000001s", "99999999999999999999ms",
    ])
    func rejected(_ text: String) {
        #expect(DurationText.parse(text) == nil)
    }

    @Test(arguments: [
        (Duration.zero, "0s"),
        (.milliseconds(250), "250ms"),
        (.seconds(30), "30s"),
        (.seconds(300), "5m"),
        (.seconds(3_600), "1h"),
        (.seconds(5_400), "1h30m"),
        (.seconds(172_800), "2d"),
        (.seconds(90), "1m30s"),
        (.milliseconds(1_500), "1s500ms"),
        (.milliseconds(86_400_001), "1d1ms"),
        (.milliseconds(93_784_005), "1d2h3m4s5ms"),
        // Below a millisecond rounds down.
        (.microseconds(1_999), "1ms"),
        (.microseconds(500), "0s"),
    ])
    func format(_ duration: Duration, _ expected: String) {
        #expect(DurationText.format(duration) == expected)
    }

    @Test(arguments: [
        Duration.zero, .milliseconds(1), .milliseconds(999), .seconds(59), .seconds(61), .seconds(3_601),
        .milliseconds(123_456_789), .seconds(9 * 365 * 86_400),
    ])
    func formatThenParseRoundTrips(_ duration: Duration) throws {
        let text = DurationText.format(duration)
        #expect(DurationText.parse(text) == duration, "\(text)")
    }

    @Test(arguments: ["250ms", "30s", "1h30m", "2d", "1d2h3m4s5ms"])
    func parseThenFormatRoundTrips(_ text: String) throws {
        let duration = try #require(DurationText.parse(text))
        #expect(DurationText.format(duration) == text)
    }

    @Test func nonCanonicalTextFormatsCanonically() throws {
        #expect(DurationText.format(try #require(DurationText.parse("90m"))) == "1h30m")
        #expect(DurationText.format(try #require(DurationText.parse("1000ms"))) == "1s")
    }

    @Test func millisecondsRoundDown() {
        #expect(Duration.milliseconds(1_234).milliseconds == 1_234)
        #expect(Duration.seconds(2).milliseconds == 2_000)
        #expect(Duration.microseconds(2_999).milliseconds == 2)
        #expect(Duration.zero.milliseconds == 0)
    }
}
