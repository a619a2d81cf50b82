import NIOCore
import Synchronization

/// The shared bandwidth of a shaped relay: every slice of bytes, whichever connection and
/// direction, takes the link in turn, so that two transfers at once each get about half.
///
/// A slice that arrives while the link is busy waits for it; it is delivered once the link has
/// carried it and the one-way delay has passed.
final class RelayThrottle: Sendable {
    let shape: LinkShape
    private let state = Mutex(State())

    private struct State {
        /// When the link is next free.
        var nextFree = NIODeadline.now()
        /// When each cut happened, in order: a slice booked before the n-th cut (its
        /// ``Booking/cutsBefore`` is n) crossed only if it was carried by then.
        var cuts: [NIODeadline] = []
    }

    /// A slice's turn on the link.
    struct Booking {
        /// When the link has carried it: from then it counts as sent, whatever happens to it
        /// in the delay line.
        let crossed: NIODeadline
        /// When it reaches the other end.
        let delivered: NIODeadline
        let cutsBefore: Int
    }

    init(shape: LinkShape) {
        self.shape = shape
    }

    /// Frees the link now: what was booked on it and not carried yet was dropped (the
    /// connections were cut).
    func clear() {
        state.withLock { state in
            let now = NIODeadline.now()
            state.nextFree = now
            state.cuts.append(now)
        }
    }

    /// Books `bytes` on the link.
    func book(_ bytes: Int) -> Booking {
        let transmit = TimeAmount.nanoseconds(Int64(bytes) * 1_000_000_000 / Int64(shape.bytesPerSecond))
        let delay = TimeAmount.nanoseconds(Int64(shape.oneWay.components.seconds) * 1_000_000_000
            + shape.oneWay.components.attoseconds / 1_000_000_000)
        return state.withLock { state in
            let start = max(state.nextFree, NIODeadline.now())
            state.nextFree = start + transmit
            return Booking(crossed: state.nextFree, delivered: state.nextFree + delay, cutsBefore: state.cuts.count)
        }
    }

    /// Whether `booking`'s slice was carried: no cut came before the link finished with it.
    func carried(_ booking: Booking) -> Bool {
        state.withLock { state in
            booking.cutsBefore == state.cuts.count || state.cuts[booking.cutsBefore] >= booking.crossed
        }
    }
}
