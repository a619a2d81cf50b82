/// The benchmark's result as a plain-text table: one row per metric, one column per strategy
/// (`dally`, `naive`, `periodic`, `floor`), numbers right-aligned with thousands separators,
/// so that the figures read the same in a terminal, a CI log and the README.
///
/// For example:
///
/// ```
/// var report = FrugalReport(columns: ["dally", "naive"])
/// report.add("bytes up", integers: [182_340, 9_551_002])
/// report.add("energy (J)", decimals: [41.5, 3_960.25], places: 1)
/// print(report.render())
/// ```
public struct FrugalReport: Sendable, Equatable {
    public var columns: [String]
    public private(set) var rows: [Row] = []

    /// One metric's cells, already formatted; `—` where a strategy has no figure.
    public struct Row: Sendable, Equatable {
        public var metric: String
        public var cells: [String]
    }

    /// What a cell shows when a strategy has no figure for a metric.
    public static let missing = "—"

    public init(columns: [String]) { self.columns = columns }

    /// A row of whole numbers; nil (or a short array) leaves a cell empty.
    public mutating func add(_ metric: String, integers: [Int?]) {
        add(metric, cells: integers.map { $0.map(Self.grouped) ?? Self.missing })
    }

    /// A row of decimals with `places` digits after the point.
    public mutating func add(_ metric: String, decimals: [Double?], places: Int = 1) {
        add(metric, cells: decimals.map { $0.map { Self.decimal($0, places: places) } ?? Self.missing })
    }

    /// A row of cells formatted by the caller (ratios, say).
    public mutating func add(_ metric: String, cells: [String]) {
        var cells = Array(cells.prefix(columns.count))
        while cells.count < columns.count { cells.append(Self.missing) }
        rows.append(Row(metric: metric, cells: cells))
    }

    /// The table: a header line, a rule, then the rows; the metric column left-aligned, the
    /// others right-aligned, two spaces apart, each line ending in a newline.
    public func render() -> String {
        let metricWidth = rows.map { width($0.metric) }.max() ?? 0
        let widths = columns.indices.map { column in
            rows.map { width($0.cells[column]) }.reduce(width(columns[column]), Swift.max)
        }
        func line(_ first: String, _ cells: [String]) -> String {
            var text = first + String(repeating: " ", count: metricWidth - width(first))
            for (cell, cellWidth) in zip(cells, widths) {
                text += "  " + String(repeating: " ", count: cellWidth - width(cell)) + cell
            }
            return text + "\n"
        }
        var text = line("", columns)
        text += String(repeating: "-", count: metricWidth + widths.reduce(0) { $0 + $1 + 2 }) + "\n"
        for row in rows { text += line(row.metric, row.cells) }
        return text
    }

    /// `numerator / denominator` as a factor with one decimal: `"23.4×"`; `"∞"` when only the
    /// denominator is 0, `—` when both are.
    public static func ratio(_ numerator: Double, _ denominator: Double) -> String {
        guard denominator != 0 else { return numerator == 0 ? missing : "∞" }
        return decimal(numerator / denominator, places: 1) + "×"
    }

    /// `1234567` as `"1,234,567"`.
    public static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var text = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { text.append(",") }
            text.append(digit)
        }
        return value < 0 ? "-" + text : text
    }

    /// `value` rounded half away from zero to `places` decimals, with thousands separators:
    /// `decimal(12345.678, places: 2)` is `"12,345.68"`. Computed in integers, so it reads the
    /// same everywhere; non-finite values show as `—`.
    public static func decimal(_ value: Double, places: Int) -> String {
        let places = min(max(places, 0), 9)
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaled = (value.magnitude * scale).rounded(.toNearestOrAwayFromZero)
        guard value.isFinite, scaled < 9.0e18 else { return missing }
        let units = Int64(scaled)
        let divisor = Int64(scale)
        let whole = grouped(Int(units / divisor))
        let sign = value < 0 && units != 0 ? "-" : ""
        guard places > 0 else { return sign + whole }
        let fraction = String(units % divisor)
        return sign + whole + "." + String(repeating: "0", count: places - fraction.count) + fraction
    }

    /// Width in characters as a terminal shows them (`×`, `—` and `∞` are one column each).
    private func width(_ text: String) -> Int { text.count }
}
