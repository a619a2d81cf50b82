import DallyFrugal
import Testing

@Suite("FrugalReport")
struct FrugalReportTests {
    @Test func rendersARightAlignedTable() {
        var report = FrugalReport(columns: ["dally", "naive"])
        report.add("bytes up", integers: [182_340, 9_551_002])
        report.add("energy (J)", decimals: [41.5, nil], places: 1)
        report.add("vs floor", cells: [FrugalReport.ratio(234, 10)])
        #expect(
            report.render() == """
                              dally      naive
                ------------------------------
                bytes up    182,340  9,551,002
                energy (J)     41.5          —
                vs floor      23.4×          —

                """)
    }

    @Test func formatsNumbers() {
        #expect(FrugalReport.grouped(0) == "0")
        #expect(FrugalReport.grouped(999) == "999")
        #expect(FrugalReport.grouped(1_000) == "1,000")
        #expect(FrugalReport.grouped(-1_234_567) == "-1,234,567")
        #expect(FrugalReport.decimal(12_345.678, places: 2) == "12,345.68")
        #expect(FrugalReport.decimal(0.05, places: 1) == "0.1")
        #expect(FrugalReport.decimal(-2.25, places: 1) == "-2.3")
        #expect(FrugalReport.decimal(3.04, places: 0) == "3")
        #expect(FrugalReport.decimal(1.005, places: 3) == "1.005")
        #expect(FrugalReport.decimal(.nan, places: 1) == "—")
        #expect(FrugalReport.ratio(1, 3) == "0.3×")
        #expect(FrugalReport.ratio(12_345, 1) == "12,345.0×")
        #expect(FrugalReport.ratio(5, 0) == "∞")
        #expect(FrugalReport.ratio(0, 0) == "—")
    }
}
