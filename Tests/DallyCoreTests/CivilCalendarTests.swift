import Testing

@testable import DallyCore

@Suite("Civil calendar")
struct CivilCalendarTests {
    @Test func daysAndDatesGoBothWaysFromYearZeroToYear9999() {
        var previous: (year: Int64, month: Int64, day: Int64)?
        for days in stride(from: CivilCalendar.days(year: 0, month: 1, day: 1), through: CivilCalendar.days(year: 9999, month: 12, day: 31), by: 1) {
            let date = CivilCalendar.date(days: days)
            if CivilCalendar.days(year: date.year, month: date.month, day: date.day) != days {
                Issue.record("day \(days) reads \(date), which reads back otherwise")
                return
            }
            if let previous {
                // Each day follows the one before: the next day of the month, or the 1st after the last.
                let last = previous.day == CivilCalendar.daysIn(month: previous.month, year: previous.year)
                let ok = last
                    ? date.day == 1 && (date.month == previous.month % 12 + 1)
                    : date.day == previous.day + 1 && date.month == previous.month && date.year == previous.year
                if !ok { Issue.record("\(previous) then \(date)"); return }
            }
            previous = date
        }
        #expect(CivilCalendar.days(year: 1970, month: 1, day: 1) == 0)
        #expect(CivilCalendar.date(days: 19_782) == (2024, 2, 29))
    }
}
