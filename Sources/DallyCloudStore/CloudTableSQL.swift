import DallyCore
import DallyStore
import GRDB

/// The SQL text for one table of the cloud's primary copy, built once at open from names
/// already validated against the schema; values are always bound parameters.
///
/// A table `orders` is stored as `"t_orders"(id, version, updated_at, deleted, origin, batch,
/// "c_…"…)`: `version` is unique within the table, so `version > ?` is a tie-free cursor;
/// `origin` (the writing replica) and `batch` (the batch that wrote the row last) let a retried
/// batch be recognised row by row even after its stored answer has been forgotten.
///
/// Unlike the replica's tables these are rowid tables with a unique index on `id`: row ids
/// arrive in random order, and appending rows while only the narrow index takes the random
/// inserts applied batches about twice as fast as a `WITHOUT ROWID` table keyed by `id`.
struct CloudTableSQL: StoredTable, Sendable {
    package let schema: TableSchema
    let sqlTable: String
    let sqlColumns: [String]
    let selectCurrent: String
    let selectChanges: String
    let selectForeignChanges: String
    let selectForeignExists: String
    let delete: String

    init(schema: TableSchema) {
        self.schema = schema
        sqlTable = TableSQL.quote("t_\(schema.name)")
        sqlColumns = schema.columns.map { TableSQL.quote("c_\($0.name)") }
        selectCurrent = "SELECT version, updated_at, deleted, origin, batch FROM \(sqlTable) WHERE id = ?"
        // `origin` last: the values sit at 4..., and a page shared among gateways leaves out
        // each asker's own rows by it.
        let list = (["id", "version", "updated_at", "deleted"] + sqlColumns + ["origin"]).joined(separator: ", ")
        selectChanges = "SELECT \(list) FROM \(sqlTable) WHERE version > ? ORDER BY version LIMIT ?"
        selectForeignChanges =
            "SELECT \(list) FROM \(sqlTable) WHERE version > ? AND origin <> ? ORDER BY version LIMIT ?"
        selectForeignExists = "SELECT 1 FROM \(sqlTable) WHERE version > ? AND origin <> ? LIMIT 1"
        let cleared = sqlColumns.map { ", \($0) = NULL" }.joined()
        delete = """
            INSERT INTO \(sqlTable) (id, version, updated_at, deleted, origin, batch) VALUES (?, ?, ?, 1, ?, ?) \
            ON CONFLICT(id) DO UPDATE SET version = excluded.version, updated_at = excluded.updated_at, \
            deleted = 1, origin = excluded.origin, batch = excluded.batch\(cleared)
            """
    }

    /// An upsert writing the given columns (positions in the schema); the row's other columns
    /// keep their values, or are null for a new row.
    func upsert(columns positions: [Int]) -> String {
        let columns = positions.map { sqlColumns[$0] }
        let names = (["id", "version", "updated_at", "deleted", "origin", "batch"] + columns).joined(separator: ", ")
        let placeholders = Array(repeating: "?", count: 6 + columns.count).joined(separator: ", ")
        let updates = (["version", "updated_at", "deleted", "origin", "batch"] + columns)
            .map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        return "INSERT INTO \(sqlTable) (\(names)) VALUES (\(placeholders)) ON CONFLICT(id) DO UPDATE SET \(updates)"
    }

    /// The arguments of ``upsert(columns:)`` (with `values` of those columns, in that order) or
    /// of ``delete`` (no values), in the order their SQL names them.
    func writeArguments(
        id: String, version: Int64, updatedAt: Int64, deleted: Bool, origin: String, batch: String,
        values: [DatabaseValue]
    ) -> [DatabaseValue] {
        var arguments: [DatabaseValue] = [id.databaseValue, version.databaseValue, updatedAt.databaseValue]
        arguments.reserveCapacity(6 + values.count)
        if !deleted { arguments.append(0.databaseValue) }
        arguments.append(origin.databaseValue)
        arguments.append(batch.databaseValue)
        if !deleted { arguments.append(contentsOf: values) }
        return arguments
    }

    /// The given columns of one row, for the cloud's side of a conflict.
    func selectValues(columns positions: [Int]) -> String {
        let columns = positions.map { sqlColumns[$0] }
        return "SELECT version, updated_at, deleted\(columns.map { ", \($0)" }.joined()) FROM \(sqlTable) WHERE id = ?"
    }

    package var createStatements: [String] {
        let columns = zip(sqlColumns, schema.columns).map { "\($0) \(TableSQL.storageType($1.type))" }
        return [
            """
            CREATE TABLE \(sqlTable) (
                id TEXT NOT NULL UNIQUE,
                version INTEGER NOT NULL,
                updated_at INTEGER NOT NULL,
                deleted INTEGER NOT NULL DEFAULT 0,
                origin TEXT NOT NULL,
                batch TEXT NOT NULL\(columns.isEmpty ? "" : ",\n    " + columns.joined(separator: ",\n    "))
            )
            """,
            "CREATE UNIQUE INDEX \(TableSQL.quote("t_\(schema.name)_version")) ON \(sqlTable)(version)",
        ]
    }

    /// A partial index of the tombstones by version, for compaction; created if missing at
    /// each open so that an older store gains it.
    var tombstoneIndexStatement: String {
        "CREATE INDEX IF NOT EXISTS \(tombstoneIndex) ON \(sqlTable)(version) WHERE deleted = 1"
    }

    private var tombstoneIndex: String { TableSQL.quote("t_\(schema.name)_tombstones") }

    /// The table's rows, counted from its version index (SQLite counts an index's entries
    /// without reading the rows), and its tombstones, from their partial index: what `/stats`
    /// shows. A `GROUP BY deleted` read every row of the table instead: `/stats` took 303 ms
    /// at a million rows, 6.5 now (docs/BENCHMARKS.md, "The cloud's `/stats`").
    var rowCountStatement: String { "SELECT COUNT(*) FROM \(sqlTable)" }
    var tombstoneCountStatement: String { "SELECT COUNT(*) FROM \(sqlTable) INDEXED BY \(tombstoneIndex) WHERE deleted = 1" }

    package func addColumnStatement(_ column: DallyCore.Column) -> String {
        "ALTER TABLE \(sqlTable) ADD COLUMN \(TableSQL.quote("c_\(column.name)")) \(TableSQL.storageType(column.type))"
    }
}
