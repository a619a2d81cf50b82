import DallyCore

/// What an uplink's real transfers have shown of its link: throughput each way and the round
/// trip, smoothed, and the bytes failures cost. Nil figures are not measured yet.
public struct LinkEstimate: Sendable, Equatable, Encodable {
    /// Request bodies, bytes per second as the cloud received them.
    public var bytesPerSecondUp: Double?
    /// Answer bodies, bytes per second.
    public var bytesPerSecondDown: Double?
    /// From a small request's start to its answer's head, in milliseconds.
    public var roundTripMs: Double?
    /// Transfers measured.
    public var samples: Int64 = 0
    /// Request body bytes handed to the connection in requests that then failed: an upper bound
    /// of the link's waste (bytes still in the socket's queue at a cut never crossed it, and
    /// what the cloud kept of a cut upload is counted in ``resumedBytes`` too).
    public var wastedBytes: Int64 = 0
    /// Bytes of cut chunk transfers not sent again: of uploads, what the cloud kept; of
    /// downloads, what the gateway kept and asked the rest of by `Range`.
    public var resumedBytes: Int64 = 0
    /// Requests sent again on a fresh connection because the pooled one had closed before
    /// they went (``StaleConnection``): after a cut, how many of its closed connections the
    /// pool handed out before it learnt of them. Neither failures nor waste.
    public var staleConnections: Int64 = 0

    public init() {}

    /// `{"bytes_per_second_up":…,"bytes_per_second_down":…,"round_trip_ms":…,"samples":…}`;
    /// the byte counts go with the uplink's counters.
    public func encode(to encoder: any Encoder) throws {
        var object = encoder.container(keyedBy: CodingName.self)
        try object.encode(bytesPerSecondUp.map { $0.rounded() }, for: "bytes_per_second_up")
        try object.encode(bytesPerSecondDown.map { $0.rounded() }, for: "bytes_per_second_down")
        try object.encode(roundTripMs.map { $0.rounded() }, for: "round_trip_ms")
        try object.encode(samples, for: "samples")
    }

    /// The counters that belong beside the uplink's others in `/stats` and `/metrics`.
    var counters: [(String, Int64)] {
        [("wasted_bytes", wastedBytes), ("resumed_bytes", resumedBytes), ("stale_connections", staleConnections)]
    }
}
