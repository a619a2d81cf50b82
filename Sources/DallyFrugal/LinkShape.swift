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
    /// How long a new connection waits before its first byte moves: a real link's TCP handshake
    /// is a round trip (and TLS adds its own), which a relay on loopback would otherwise give
    /// for free. Zero by default.
    public var setUp: Duration

    public init(bytesPerSecond: Int, roundTrip: Duration = .zero, setUp: Duration = .zero) {
        self.bytesPerSecond = max(1, bytesPerSecond)
        self.roundTrip = roundTrip
        self.setUp = setUp
    }

    /// The delay each byte gets on its way, one direction.
    var oneWay: Duration { roundTrip / 2 }

    /// The most bytes the relay takes from a sender before they arrive: a tenth of a second of
    /// the link (at least 1 KiB) waiting to be carried, plus what is on its way during the
    /// one-way delay (the link's bandwidth-delay product, without which a long link could
    /// never be full). A sender sees its bytes leave at the link's pace; a cut loses what was
    /// in flight, as on the real link.
    var queueLimit: Int {
        let inFlight = Double(bytesPerSecond) * (Double(oneWay.components.seconds) + Double(oneWay.components.attoseconds) / 1e18)
        return max(1_024, bytesPerSecond / 10) + Int(inFlight)
    }

    /// The largest slice the relay schedules at once, so that deliveries are smooth: a
    /// twentieth of a second of the link, at least 256 bytes.
    var sliceBytes: Int { max(256, bytesPerSecond / 20) }
}
