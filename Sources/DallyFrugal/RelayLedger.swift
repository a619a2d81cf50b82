import NIOCore
import Synchronization

/// Which way bytes moved through a relay.
enum RelayDirection: Sendable {
    /// From the client (the gateway) towards the upstream (the cloud).
    case up
    /// From the upstream back to the client.
    case down
}

/// What a ``CountingRelay`` has seen since it started or was last reset.
public struct RelayCounts: Sendable, Equatable {
    /// Bytes read from clients and forwarded upstream: TCP payload, without TCP/IP headers. On
    /// a shaped relay, the bytes its link carried (what a cut dropped before that is not).
    public var bytesUp = 0
    /// Bytes read from the upstream and forwarded to clients.
    public var bytesDown = 0
    /// Connections accepted.
    public var connections = 0
    /// HTTP/1.1 requests: client bytes arriving on a connection that is new or whose last bytes
    /// went downstream. Exact for a client that does not pipeline, as Dally's does not.
    public var requests = 0
    /// Per connection and simulated millisecond, the bytes that moved, in order of arrival.
    public var activities: [RelayActivity] = []
    /// The most bytes the relay held at once, read from one side but not yet taken by the
    /// other's socket: bounded by the write buffer's high-water mark plus one read, whatever
    /// the transfer's size, as long as backpressure works.
    public var maxQueuedBytes = 0

    public init() {}
}

/// Bytes that moved over one relayed connection within one millisecond of the simulated clock.
public struct RelayActivity: Sendable, Equatable {
    /// The simulated clock (ms) when the bytes were read (on a shaped relay, carried).
    public var at: Int64
    /// The connection's number, from 0 in order of acceptance.
    public var connection: Int
    public var bytesUp: Int
    public var bytesDown: Int

    public init(at: Int64, connection: Int, bytesUp: Int, bytesDown: Int) {
        self.at = at
        self.connection = connection
        self.bytesUp = bytesUp
        self.bytesDown = bytesDown
    }
}

/// The relay's shared state: the counts, what is needed to count requests and merge
/// activities, and the open channels for ``CountingRelay/stop()``. Touched from event-loop
/// threads and callers alike, so behind a mutex.
final class RelayLedger: Sendable {
    private struct State {
        var counts = RelayCounts()
        /// Which way each open connection's last bytes went.
        var lastDirection: [Int: RelayDirection] = [:]
        /// Index in `counts.activities` of each connection's latest activity.
        var lastActivity: [Int: Int] = [:]
        var nextConnection = 0
        var queuedBytes = 0
        /// Each open connection's channels: the client's, then the upstream's once connected.
        var open: [Int: [any Channel]] = [:]
    }

    private let state = Mutex(State())
    /// Whether the relay holds its connections (``CountingRelay/hold()``): read at every read
    /// either side asks for, so apart from the mutex.
    private let holding = Atomic<Bool>(false)

    var counts: RelayCounts { state.withLock { $0.counts } }

    /// Whether no side may read now.
    var isHolding: Bool { holding.load(ordering: .acquiring) }

    func setHolding(_ held: Bool) { holding.store(held, ordering: .releasing) }

    /// Numbers and counts a new connection.
    func accept(_ channel: any Channel) -> Int {
        state.withLock { state in
            let connection = state.nextConnection
            state.nextConnection += 1
            state.counts.connections += 1
            state.open[connection] = [channel]
            return connection
        }
    }

    /// Records the upstream channel of `connection`; false when the client's side closed
    /// (or was cut) while the upstream was still connecting, so the caller closes it.
    func connected(_ connection: Int, upstream: any Channel) -> Bool {
        state.withLock { state in
            guard state.open[connection] != nil else { return false }
            state.open[connection]?.append(upstream)
            return true
        }
    }

    func closed(_ connection: Int) {
        state.withLock { state in
            state.open[connection] = nil
            state.lastDirection[connection] = nil
            state.lastActivity[connection] = nil
        }
    }

    /// How many relayed connections are open: accepted, and their client's side not closed.
    var openConnections: Int { state.withLock { $0.open.count } }

    /// Every channel still open; the relay closes them on stop.
    var openChannels: [any Channel] { state.withLock { $0.open.values.flatMap { $0 } } }

    func read(_ direction: RelayDirection, bytes: Int, connection: Int, at time: Int64) {
        state.withLock { state in
            switch direction {
            case .up:
                state.counts.bytesUp += bytes
                if state.lastDirection[connection] != .up { state.counts.requests += 1 }
            case .down:
                state.counts.bytesDown += bytes
            }
            state.lastDirection[connection] = direction
            let up = direction == .up ? bytes : 0
            let down = direction == .down ? bytes : 0
            if let index = state.lastActivity[connection], state.counts.activities[index].at == time {
                state.counts.activities[index].bytesUp += up
                state.counts.activities[index].bytesDown += down
            } else {
                state.lastActivity[connection] = state.counts.activities.count
                state.counts.activities.append(
                    RelayActivity(at: time, connection: connection, bytesUp: up, bytesDown: down))
            }
        }
    }

    /// Bytes handed to a socket (positive) or taken by it (negative).
    func queued(_ delta: Int) {
        state.withLock { state in
            state.queuedBytes += delta
            state.counts.maxQueuedBytes = max(state.counts.maxQueuedBytes, state.queuedBytes)
        }
    }

    /// Zeroes the counts; open connections stay open and keep their request state, so a request
    /// already under way is not counted twice.
    func reset() {
        state.withLock { state in
            state.counts = RelayCounts()
            state.counts.maxQueuedBytes = state.queuedBytes
            state.lastActivity = [:]
        }
    }
}
