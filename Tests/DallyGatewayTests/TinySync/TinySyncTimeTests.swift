import Testing

@testable import DallyGateway

@Suite("TinySync times")
struct TinySyncTimeTests {
    @Test func theSeedsFormWithANumericOffsetParses() {
        // 09:12:43 at UTC-7 is 16:12:43 UTC.
        #expect(TinySyncTime.parse("2014-02-14T09:12:43-0700") == 1_392_394_363_000)
        #expect(TinySyncTime.parse("2014-02-14T09:12:43-07:00") == 1_392_394_363_000)
        #expect(TinySyncTime.parse("2014-02-14T09:12:43-07") == 1_392_394_363_000)
        #expect(TinySyncTime.parse("2014-03-02T18:24:54-0800") == 1_393_813_494_000)
    }

    @Test func zuluFractionsAndSpacesParse() {
        #expect(TinySyncTime.parse("2014-02-14T16:12:43Z") == 1_392_394_363_000)
        #expect(TinySyncTime.parse("2014-02-14T16:12:43.5Z") == 1_392_394_363_500)
        #expect(TinySyncTime.parse("2014-02-14T16:12:43.123Z") == 1_392_394_363_123)
        // Finer than a millisecond is cut, never rounded up: an earlier cursor only repeats rows.
        #expect(TinySyncTime.parse("2014-02-14T16:12:43.123999+00:00") == 1_392_394_363_123)
        #expect(TinySyncTime.parse("2014-02-14 16:12:43") == 1_392_394_363_000)
        #expect(TinySyncTime.parse("2014-02-14T16:12Z") == 1_392_394_320_000)
        #expect(TinySyncTime.parse("1970-01-01T00:00:00Z") == 0)
        #expect(TinySyncTime.parse("2000-02-29T00:00:00Z") == 951_782_400_000)
    }

    @Test func notTimesAreRefused() {
        for text in [
            "", "yesterday", "2014-02-14", "2014-02-30T00:00:00Z", "2014-13-01T00:00:00Z", "2014-02-14T24:00:00Z",
            "2014-02-14T16:12:43.Z", "2014-02-14T16:12:43+7", "2014-02-14T16:12:43Z trailing", "1392394363000",
        ] {
            #expect(TinySyncTime.parse(text) == nil, "\(text)")
        }
    }

    @Test func formattingIsUTCToTheMillisecondAndRoundTrips() {
        #expect(TinySyncTime.format(1_392_394_363_000) == "2014-02-14T16:12:43.000Z")
        #expect(TinySyncTime.format(0) == "1970-01-01T00:00:00.000Z")
        #expect(TinySyncTime.format(-1) == "1969-12-31T23:59:59.999Z")
        for millis: Int64 in [0, 1, 951_782_400_000, 1_800_000_000_123, 4_102_444_799_999] {
            #expect(TinySyncTime.format(millis).flatMap(TinySyncTime.parse) == millis)
        }
    }

    @Test func onlyFourDigitYearsAreFormattedAndNoNumberTraps() {
        #expect(TinySyncTime.format(253_402_300_799_999) == "9999-12-31T23:59:59.999Z")
        #expect(TinySyncTime.format(-62_167_219_200_000) == "0000-01-01T00:00:00.000Z")
        // Int64.min once overflowed the day arithmetic and stopped the gateway.
        for millis: Int64 in [253_402_300_800_000, -62_167_219_200_001, .max, .min] {
            #expect(TinySyncTime.format(millis) == nil, "\(millis)")
        }
    }
}
