import DallyCore
import DallySync
import GRDB

/// Columns added to a table the replica already held rows of, filled from the cloud.
///
/// A page carries every column the cloud has, and a gateway keeps only those it declares. A
/// column added to a gateway's table after the cloud had it (a rolling schema upgrade: the
/// cloud first, the sites later) starts null on every row the gateway held, though the cloud
/// holds values there. Left so, the gateway's readers would never see them, and its next
/// change of such a row would send null over them. So when the store opens after the upgrade,
/// the table is pulled again from version 0 as a resync (``ResyncLedger``: the gateway's own
/// rows come too), and until the pull's last page:
///
/// - a clean row at the page's version takes the page's values where they differ (its other
///   columns already are the cloud's);
/// - a row with local changes takes the cloud's value in each added column it holds null, as a
///   local change that keeps the row's writer time, so that its pending change goes up with it
///   (a local write that set an added column keeps its value; one that set it to null is
///   indistinguishable and takes the cloud's);
/// - the table's changes wait in the outbox (``ReplicaStore/nextBatch(gateway:maxRows:scope:excluding:)``
///   leaves them out, the scheduler does not see them), and a wake pulls the table first.
///
/// `OBJECT` columns are filled on clean rows only: a pending change's object column is the
/// local writer's to name.
enum ColumnFill {
    /// Starts filling `added`, columns just added to `table`, unless the table has no rows
    /// yet (a pull brings them whole) or never comes down (local only, or no network class
    /// may bring it: its changes would wait for ever).
    static func begin(_ table: TableSQL, added: [DallyCore.Column], now: Int64, db: Database) throws {
        let name = table.schema.name
        let policy = table.schema.policy
        guard !policy.localOnly, !policy.downloadRows.networks.isEmpty, !added.isEmpty,
            try Bool.fetchOne(db, sql: "SELECT 1 FROM \(table.sqlTable) LIMIT 1") == true
        else { return }
        let held = try columns(of: name, db: db)
        let names = held + added.map(\.name).filter { !held.contains($0) }
        try ResyncLedger.begin(table, now: now, counted: false, db: db)
        try db.execute(
            sql: "UPDATE dally_resync SET fill = ? WHERE tbl = ?", arguments: [names.joined(separator: ","), name])
        try DeclarationRecord.pullFromScratch(name, db: db)
        // Due at once, whatever the table's download period: its changes wait for this pull.
        try db.execute(sql: "DELETE FROM dally_pulls WHERE tbl = ?", arguments: [name])
    }

    /// The names of the columns being filled in `table`, empty when none are.
    static func columns(of table: String, db: Database) throws -> [String] {
        let list = try String.fetchOne(
            db.cachedStatement(sql: "SELECT fill FROM dally_resync WHERE tbl = ?"), arguments: [table])
        return list.map(names) ?? []
    }

    /// The tables whose added columns are being filled.
    static func tables(db: Database) throws -> Set<String> {
        Set(try String.fetchAll(db, sql: "SELECT tbl FROM dally_resync WHERE fill IS NOT NULL"))
    }

    /// Per table whose added columns are being filled, their names.
    static func all(db: Database) throws -> [String: [String]] {
        var fills: [String: [String]] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT tbl, fill FROM dally_resync WHERE fill IS NOT NULL") {
            fills[row[0]] = names(row[1])
        }
        return fills
    }

    /// The column names a `fill` list holds (valid names hold no comma).
    private static func names(_ list: String) -> [String] {
        list.split(separator: ",").map(String.init)
    }

    /// The local positions of the columns being filled in `schema`'s table.
    static func positions(in schema: TableSchema, db: Database) throws -> Set<Int> {
        Set(try columns(of: schema.name, db: db).compactMap(schema.columnIndex))
    }

    /// Whether the clean row `old`, at `row`'s version, holds other values than the page in a
    /// column being filled.
    static func differs(
        _ row: ChangePage.ChangedRow, from old: StoredRow, columns: [Int?], filling: Set<Int>, schema: TableSchema
    ) -> Bool {
        guard !row.deleted, !old.deleted else { return false }
        return zip(row.values, columns).contains { json, position in
            guard let position, filling.contains(position),
                let value = try? Value(wire: json, for: schema.columns[position])
            else { return false }
            return value != old.values[position]
        }
    }

    /// Gives the row with local changes `old` the page's values in the filled columns it holds
    /// null, as a local change; returns whether it took any.
    static func fillPending(
        _ row: ChangePage.ChangedRow, into old: StoredRow, columns: [Int?], filling: Set<Int>, table: TableSQL,
        db: Database, context: inout CommitContext
    ) throws -> Bool {
        let schema = table.schema
        guard !row.deleted, !old.deleted else { return false }
        var values: [(index: Int, value: Value)] = []
        for (json, position) in zip(row.values, columns) {
            guard let position, filling.contains(position), old.values[position] == .null,
                schema.columns[position].type != .object,
                let value = try? Value(wire: json, for: schema.columns[position]), value != .null
            else { continue }
            values.append((position, value))
        }
        guard !values.isEmpty else { return false }
        values.sort { $0.index < $1.index }
        let write = RowWrite(id: row.id, kind: .patch, values: values, updatedAt: old.updatedAt, expectedSeq: nil)
        do {
            _ = try RowWriter.apply(write, table: table, db: db, context: &context)
        } catch is DallyError {
            // Refused before it changed anything (a gateway scope the values would leave):
            // the row's change goes up as the local writer left it.
            return false
        }
        return true
    }
}
