import DallyCompression

/// A tighter byte floor than ``FinalDataFloor``: the row states that the deadlines oblige any
/// sender to move, not only the final ones. A row rewritten every 5 s with a 2-minute delay
/// must reach the cloud about 30 times an hour, not once.
///
/// The states are those the fewest wake-ups would send with every class up: at each stab of
/// ``WakeFloor/stabs(_:)``, the latest state of every row written since the stab before. They
/// are written as ``FinalDataFloor`` writes rows (a row's versions next to each other) and
/// compressed in one zstd level-19 frame, so the figure is what moving exactly those states,
/// with perfect hindsight of the whole hour, would cost. Objects are not in the text: every
/// object a write stores must reach the cloud once (``FrugalTrace/storedObjects``), at its size,
/// which ``objectBytes(trace:)`` gives.
public enum ObligedDataFloor {
    /// The bytes of every distinct object the trace stores.
    public static func objectBytes(trace: FrugalTrace) -> Int {
        trace.storedObjects.reduce(0) { $0 + $1.size }
    }

    /// The row states the fewest wake-ups send, and the size of their text and its zstd -19 frame.
    public static func zstd19Bytes(trace: FrugalTrace) throws(CompressionError) -> (states: Int, raw: Int, compressed: Int) {
        let delays = Dictionary(trace.tables.map { ($0.name, $0.maxDelay) }, uniquingKeysWith: { first, _ in first })
        let stabs = WakeFloor.stabs(
            trace.writes.compactMap { write in
                delays[write.table].map { WakeFloor.Interval(release: write.at, deadline: write.at + $0) }
            })
        var rows: [String: [String: TraceWrite]] = [:]
        var pending: [String: TraceWrite] = [:]
        var next = 0
        var states = 0
        func send(_ stab: Int) {
            for (key, write) in pending {
                rows[write.table, default: [:]]["\(key)@\(stab)"] = write
                states += 1
            }
            pending.removeAll(keepingCapacity: true)
        }
        for write in trace.writes {
            while next < stabs.count, stabs[next] < write.at {
                send(next)
                next += 1
            }
            pending["\(write.table)/\(write.id)"] = write
        }
        send(next)
        let text = FinalDataFloor.serialize(rows, tables: trace.tables)
        let frame = try Compressor.compress(text, coding: .zstd, level: 19)
        return (states, text.count, frame.count)
    }
}
