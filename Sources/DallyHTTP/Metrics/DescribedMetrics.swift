import Prometheus

/// Metrics registered with their `# HELP` line, so a Prometheus user reads what a series
/// means (and its unit) without opening the README.
///
/// The registry hands back the same collector for the same name and labels, so callers may ask
/// for a metric each time they touch it; the help must then be the same text every time (the
/// registry refuses a second, different help for one name).
extension PrometheusCollectorRegistry {
    /// The gauge `name` with `labels`, described by `help`.
    public func gauge(_ name: String, help: String, labels: [(String, String)] = []) -> Gauge {
        makeGauge(descriptor: Self.descriptor(name, help: help), labels: labels)
    }

    /// The counter `name` with `labels`, described by `help`.
    public func counter(_ name: String, help: String, labels: [(String, String)] = []) -> Counter {
        makeCounter(descriptor: Self.descriptor(name, help: help), labels: labels)
    }

    /// Our names already carry their unit (`_seconds`, `_bytes`, `_total`), so the descriptor's
    /// separate unit stays empty and the name is used as it is.
    private static func descriptor(_ name: String, help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
    }
}
