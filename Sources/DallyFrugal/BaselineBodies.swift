import DallyCore
import DallySync

/// What the two baselines send: ordinary `POST /v1/batches` bodies of the cloud protocol, so
/// the comparison is of *when and how much* is sent, not of wire formats.
///
/// - **naive**: every local write is sent at once, as its own request carrying the row's full
///   state — what an app that syncs on every save does.
/// - **periodic**: each client sends once a period (a minute) the last state of every row it
///   changed since its previous send, one request per client — TinySync's scheme.
///
/// Neither asks for downstream changes (`since` is empty): the benchmark measures uploads.
/// An `OBJECT` column travels as the object's reference, which the caller gives
/// (`objectValue`; without it the column stays null): the object's bytes go by the objects
/// API, in requests of their own.
/// The cloud's conflict rule wants the version a change started from, so base versions come
/// from the caller, who learns them from the answers.
public enum BaselineBodies {
    /// The naive baseline's request for one write.
    ///
    /// - Parameters:
    ///   - table: the write's table (for its column names).
    ///   - baseVersion: the row's cloud version as last answered; nil for a row the cloud has
    ///     not seen.
    ///   - epochMillis: the wall-clock time of the trace's zero; `updated_at` is
    ///     `epochMillis + write.at`.
    ///   - objectValue: what the `OBJECT` column carries for an object (its reference text).
    public static func naiveBatch(
        write: TraceWrite, table: TraceTable, gateway: String, replica: String, batchID: String,
        baseVersion: Int64?, epochMillis: Int64, objectValue: ((TraceObject) -> JSONValue)? = nil
    ) -> BatchRequest {
        let section = BatchRequest.Section(
            table: write.table, columns: table.columnNames,
            changes: [
                change(
                    write, baseVersion: baseVersion, epochMillis: epochMillis, objectColumn: table.objectColumn,
                    objectValue: objectValue)
            ])
        return BatchRequest(
            batchID: batchID, gateway: gateway, replica: replica, since: TableVersions(), sections: [section])
    }

    /// The bytes of ``naiveBatch(write:table:gateway:replica:batchID:baseVersion:epochMillis:)``.
    public static func naive(
        write: TraceWrite, table: TraceTable, gateway: String, replica: String, batchID: String,
        baseVersion: Int64?, epochMillis: Int64
    ) -> [UInt8] {
        naiveBatch(
            write: write, table: table, gateway: gateway, replica: replica, batchID: batchID,
            baseVersion: baseVersion, epochMillis: epochMillis
        ).encode()
    }

    /// The periodic baseline's request for one client's writes of one period: coalesced to the
    /// last state of each row, one section per table in the order of `tables` (tables without
    /// changes left out), rows in the order they were first written in the period. nil when
    /// there is nothing to send.
    ///
    /// - Parameters:
    ///   - writes: the client's writes of the period, in time order.
    ///   - baseVersion: the cloud version of `(table, id)` as last answered, nil if none.
    public static func periodicBatch(
        writes: [TraceWrite], tables: [TraceTable], gateway: String, replica: String, batchID: String,
        epochMillis: Int64, baseVersion: (_ table: String, _ id: String) -> Int64?,
        objectValue: ((TraceObject) -> JSONValue)? = nil
    ) -> BatchRequest? {
        var order: [String: [String]] = [:]
        var last: [String: [String: TraceWrite]] = [:]
        for write in writes {
            if last[write.table, default: [:]].updateValue(write, forKey: write.id) == nil {
                order[write.table, default: []].append(write.id)
            }
        }
        var sections: [BatchRequest.Section] = []
        for table in tables {
            guard let ids = order[table.name], let rows = last[table.name] else { continue }
            let changes = ids.compactMap { id in
                rows[id].map {
                    change(
                        $0, baseVersion: baseVersion(table.name, id), epochMillis: epochMillis,
                        objectColumn: table.objectColumn, objectValue: objectValue)
                }
            }
            sections.append(BatchRequest.Section(table: table.name, columns: table.columnNames, changes: changes))
        }
        guard !sections.isEmpty else { return nil }
        return BatchRequest(
            batchID: batchID, gateway: gateway, replica: replica, since: TableVersions(), sections: sections)
    }

    /// The bytes of ``periodicBatch(writes:tables:gateway:replica:batchID:epochMillis:baseVersion:)``.
    public static func periodic(
        writes: [TraceWrite], tables: [TraceTable], gateway: String, replica: String, batchID: String,
        epochMillis: Int64, baseVersion: (_ table: String, _ id: String) -> Int64?
    ) -> [UInt8]? {
        periodicBatch(
            writes: writes, tables: tables, gateway: gateway, replica: replica, batchID: batchID,
            epochMillis: epochMillis, baseVersion: baseVersion
        )?.encode()
    }

    /// When the periodic baseline sends: each client every `period` ms, at its own phase
    /// (`client × period / clients`, so the fleet's sends spread over the period as independent
    /// timers would), carrying that client's writes made since its previous tick (at or after
    /// it, before this one). Ticks with no writes send nothing and are left out; a client's
    /// last send is the first tick after its last write, which may fall after the trace's end.
    public static func periodicSends(trace: FrugalTrace, period: Int64 = 60_000) -> [PeriodicSend] {
        let period = max(period, 1)
        var byClient: [Int: [TraceWrite]] = [:]
        for write in trace.writes { byClient[write.client, default: []].append(write) }
        var sends: [PeriodicSend] = []
        for client in byClient.keys.sorted() {
            guard let writes = byClient[client] else { continue }
            let phase = Int64(client) * period / Int64(max(trace.clients, 1))
            var current: PeriodicSend?
            for write in writes {
                // The first tick strictly after the write: a write at a tick's very moment
                // waits for the next, as one made just after the timer fired would.
                let tick = write.at < phase ? phase : phase + ((write.at - phase) / period + 1) * period
                if current?.at != tick {
                    if let done = current { sends.append(done) }
                    current = PeriodicSend(at: tick, client: client, writes: [])
                }
                current?.writes.append(write)
            }
            if let done = current { sends.append(done) }
        }
        sends.sort { $0.at != $1.at ? $0.at < $1.at : $0.client < $1.client }
        return sends
    }
}

/// One request of the periodic baseline: at `at` (trace ms), `client` sends `writes`.
public struct PeriodicSend: Sendable, Equatable {
    public var at: Int64
    public var client: Int
    public var writes: [TraceWrite]

    public init(at: Int64, client: Int, writes: [TraceWrite]) {
        self.at = at
        self.client = client
        self.writes = writes
    }
}

extension BaselineBodies {
    /// A write as a batch change: the full row for a put (its object's reference in the
    /// `OBJECT` column when `objectValue` gives one), no values for a delete.
    static func change(
        _ write: TraceWrite, baseVersion: Int64?, epochMillis: Int64, objectColumn: Int? = nil,
        objectValue: ((TraceObject) -> JSONValue)? = nil
    ) -> BatchRequest.Change {
        var values = write.deleted ? [] : write.values
        if !write.deleted, let column = objectColumn, column < values.count, let object = write.object,
            let objectValue
        {
            values[column] = objectValue(object)
        }
        return BatchRequest.Change(
            id: write.id, baseVersion: baseVersion, updatedAt: epochMillis + write.at, deleted: write.deleted,
            values: values)
    }
}
