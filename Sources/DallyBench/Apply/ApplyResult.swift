import DallySync

/// One part's figures.
struct ApplyResult {
    /// `store`, `http-1`, `http-4`, `sqlite`: the RESULT line's name.
    var name: String
    var label: String
    var rows: Int
    /// The time the rows took: summed per-batch times when batches run one at a time, wall
    /// time when they run concurrently.
    var seconds: Double
    var perBatch: Samples
    var notes: String
    /// Whether the batches ran one at a time, in the order of ``perBatch``.
    var inOrder = true

    var rowsPerSecond: Double { seconds > 0 ? Double(rows) / seconds : 0 }

    /// Rows per second over the first and the last tenth of the batches, when they ran one at
    /// a time: the table grows during a run, and the rate falls as it does.
    var trend: (first: Double, last: Double)? {
        guard inOrder, perBatch.count >= 2 else { return nil }
        let tenth = max(1, perBatch.count / 10)
        let rowsPerBatch = Double(rows) / Double(perBatch.count)
        func rate(_ times: ArraySlice<Double>) -> Double {
            let seconds = times.reduce(0, +) / 1000
            return seconds > 0 ? Double(times.count) * rowsPerBatch / seconds : 0
        }
        return (rate(perBatch.values.prefix(tenth)), rate(perBatch.values.suffix(tenth)))
    }

    var resultLine: String {
        var fields = [("rows_per_s", String(Int(rowsPerSecond.rounded())))]
        fields += BenchOutput.percentileFields(perBatch, [50, 99])
        fields += [("batches", String(perBatch.count)), ("rows", String(rows))]
        if let trend {
            fields += [
                ("first10pct_rows_per_s", String(Int(trend.first.rounded()))),
                ("last10pct_rows_per_s", String(Int(trend.last.rounded()))),
            ]
        }
        return BenchOutput.resultLine("apply_" + name.replacingOccurrences(of: "-", with: "_"), fields)
    }
}
