import DallyStore
import Foundation

/// `/stats` `store.writer`: how long local writes waited for SQLite's writer (queued to
/// committed) and how long sync work held it, overall and per step.
///
/// For example:
///
/// ```json
/// {"local_waits":{"count":5120,"max_ms":7.9,"mean_ms":1.2,"buckets_ms":{"0.5":900,…,"+Inf":5120}},
///  "sync_holds":{…},"sync_steps":{"apply_answer":{…},"record_batch":{…}}}
/// ```
struct WriterStats: Encodable {
    struct Summary: Encodable {
        let count: Int64
        let maxMs: Double
        let meanMs: Double
        /// Cumulative counts at or under each bound, and `+Inf`, as Prometheus buckets.
        let bucketsMs: [String: Int64]

        init(_ histogram: WriterTimings.Histogram) {
            count = histogram.count
            maxMs = Self.rounded(histogram.maxMs)
            meanMs = histogram.count == 0 ? 0 : Self.rounded(histogram.sumMs / Double(histogram.count))
            let labels = WriterTimings.boundsMs.map(WriterMetrics.label) + ["+Inf"]
            bucketsMs = Dictionary(uniqueKeysWithValues: zip(labels, histogram.cumulative))
        }

        private static func rounded(_ ms: Double) -> Double { (ms * 1000).rounded() / 1000 }

        enum CodingKeys: String, CodingKey {
            case count
            case maxMs = "max_ms"
            case meanMs = "mean_ms"
            case bucketsMs = "buckets_ms"
        }
    }

    let localWaits: Summary
    let syncHolds: Summary
    let syncSteps: [String: Summary]

    init(_ timings: WriterTimings.Snapshot) {
        localWaits = Summary(timings.localWaits)
        syncHolds = Summary(timings.syncHolds)
        syncSteps = Dictionary(uniqueKeysWithValues: timings.syncHoldsByStep.map { ($0.key.rawValue, Summary($0.value)) })
    }

    enum CodingKeys: String, CodingKey {
        case localWaits = "local_waits"
        case syncHolds = "sync_holds"
        case syncSteps = "sync_steps"
    }
}

/// The writer's histograms in Prometheus's text format: `dally_store_write_wait_seconds` (local
/// writes, queued to committed) and `dally_store_sync_hold_seconds{step}` (sync transactions).
enum WriterMetrics {
    static func label(_ ms: Double) -> String {
        ms == ms.rounded() ? String(Int(ms)) : String(ms)
    }

    static func text(_ timings: WriterTimings.Snapshot) -> String {
        var lines: [String] = []
        lines.append("# HELP dally_store_write_wait_seconds Local writes: time from queued to committed.")
        lines.append("# TYPE dally_store_write_wait_seconds histogram")
        append(timings.localWaits, name: "dally_store_write_wait_seconds", labels: "", to: &lines)
        lines.append("# HELP dally_store_sync_hold_seconds How long each sync transaction held the writer, by step.")
        lines.append("# TYPE dally_store_sync_hold_seconds histogram")
        for step in SyncStep.allCases {
            append(
                timings.syncHoldsByStep[step] ?? WriterTimings.Histogram(), name: "dally_store_sync_hold_seconds",
                labels: "step=\"\(step.rawValue)\",", to: &lines)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func append(
        _ histogram: WriterTimings.Histogram, name: String, labels: String, to lines: inout [String]
    ) {
        let bounds = WriterTimings.boundsMs.map { String($0 / 1000) } + ["+Inf"]
        for (bound, count) in zip(bounds, histogram.cumulative) {
            lines.append("\(name)_bucket{\(labels)le=\"\(bound)\"} \(count)")
        }
        let trimmed = labels.isEmpty ? "" : "{\(labels.dropLast())}"
        lines.append("\(name)_sum\(trimmed) \(histogram.sumMs / 1000)")
        lines.append("\(name)_count\(trimmed) \(histogram.count)")
    }
}
