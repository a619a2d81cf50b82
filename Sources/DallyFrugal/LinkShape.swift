/// The shape of a slow link a ``CountingRelay`` imitates: one bandwidth shared by every
/// connection and both directions (a half-duplex satellite or radio channel), and a delay added
/// to every byte each way.
///
/// For example, a 16 kbit/s satellite hop with a 600 ms round trip:
///
/// ```
/// let relay = CountingRelay(name: "sat", now: { 0 }, shape: LinkShape(bytesPerSecond: 2_000, roundTrip: .milliseconds(600)))
/// ```
public struct LinkShape: Sendable, Equatable {
    /// Bytes per second the link carries, up and down together.
    public var bytesPerSecond: Int
    /// Added to every delivery, split evenly between the two directions.
    public var roundTrip: Duration

    public init(bytesPerSecond: Int, roundTrip: Duration = .zero) {
        self.bytesPerSecond = max(1, bytesPerSecond)
        self.roundTrip = roundTrip
    }

    /// The delay each byte gets on its way, one direction.
    var oneWay: Duration { roundTrip / 2 }

    /// The most bytes the relay takes from a sender before the link has carried them: about a
    /// tenth of a second of the link (at least 1 KiB), so that a sender sees its bytes leave at
    /// the link's pace, as it would on the real link, and a cut loses little in the relay.
    var queueLimit: Int { max(1_024, bytesPerSecond / 10) }

    /// The largest slice the relay schedules at once, so that deliveries are smooth: a
    /// twentieth of a second of the link, at least 256 bytes.
    var sliceBytes: Int { max(256, bytesPerSecond / 20) }
}
