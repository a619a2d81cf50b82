import NIOCore
import Synchronization

/// The shared bandwidth of a shaped relay: every slice of bytes, whichever connection and
/// direction, takes the link in turn, so that two transfers at once each get about half.
///
/// A slice that arrives while the link is busy waits for it; it is delivered once the link has
/// carried it and the one-way delay has passed.
final class RelayThrottle: Sendable {
    let shape: LinkShape
    /// When the link is next free.
    private let nextFree = Mutex<NIODeadline>(.now())

    init(shape: LinkShape) {
        self.shape = shape
    }

    /// Frees the link now: what was booked on it was dropped (the connections were cut).
    func clear() {
        nextFree.withLock { $0 = .now() }
    }

    /// Books `bytes` on the link; when they arrive at the other end.
    func deliveryTime(of bytes: Int) -> NIODeadline {
        let transmit = TimeAmount.nanoseconds(Int64(bytes) * 1_000_000_000 / Int64(shape.bytesPerSecond))
        let delay = TimeAmount.nanoseconds(Int64(shape.oneWay.components.seconds) * 1_000_000_000
            + shape.oneWay.components.attoseconds / 1_000_000_000)
        return nextFree.withLock { free in
            let start = max(free, NIODeadline.now())
            free = start + transmit
            return free + delay
        }
    }
}
