import DallyCore

/// The SQL text for one table of the cloud's primary copy in PostgreSQL, built once at open
/// from names already validated against the schema; values are always bound parameters.
///
/// The layout follows the SQLite store's (`"t_orders"(id, version, updated_at, deleted, origin,
/// batch, "c_…"…)`): `version` is unique within the table, so `version > $1` is a tie-free
/// cursor, and `origin` and `batch` let a retried batch be recognised row by row after its
/// stored answer was forgotten.
package struct PostgresTableSQL: Sendable {
    let schema: TableSchema
    let sqlTable: String
    let sqlColumns: [String]
    /// `id, version, updated_at, deleted, c_…, origin`: what a page reads, columns in schema
    /// order; `origin` last, by which a page shared among gateways leaves out each one's rows.
    let pageList: String

    package init(schema: TableSchema) {
        self.schema = schema
        sqlTable = Self.quote("t_\(schema.name)")
        sqlColumns = schema.columns.map { Self.quote("c_\($0.name)") }
        pageList = (["id", "version", "updated_at", "deleted"] + sqlColumns + ["origin"]).joined(separator: ", ")
    }

    /// The current rows among `$1` (a text array of ids): the ruling's facts, then the given
    /// columns (schema positions) for the cloud's side of a conflict.
    func selectCurrent(columns positions: [Int]) -> String {
        let columns = positions.map { ", \(sqlColumns[$0])" }.joined()
        return "SELECT id, version, updated_at, deleted, origin, batch\(columns) FROM \(sqlTable) WHERE id = ANY($1)"
    }

    /// Changes after `$1`, at most `$2` (or, with `foreign`, those not written by `$2`, at most `$3`).
    func selectChanges(foreign: Bool) -> String {
        foreign
            ? "SELECT \(pageList) FROM \(sqlTable) WHERE version > $1 AND origin <> $2 ORDER BY version LIMIT $3"
            : "SELECT \(pageList) FROM \(sqlTable) WHERE version > $1 ORDER BY version LIMIT $2"
    }

    /// The ids of the rows written at versions after `$1`, up to `$2`: what moved in between.
    var selectIDsInVersions: String { "SELECT id FROM \(sqlTable) WHERE version > $1 AND version <= $2" }

    var selectForeignExists: String { "SELECT 1 FROM \(sqlTable) WHERE version > $1 AND origin <> $2 LIMIT 1" }

    /// An upsert of a batch's puts writing the given columns (schema positions); a row's other
    /// columns keep their values, or are null for a new row. Binds, each a
    /// ``PostgresColumnArray`` but `origin` and `batch`: `$1` ids, `$2` versions, `$3`
    /// updated_at, `$4` origin, `$5` batch, then one array per column.
    ///
    /// The text depends on the columns only, never on the number of rows, so that PostgreSQL
    /// parses a dozen parameters whatever the batch's size.
    package func upsert(columns positions: [Int]) -> String {
        let columns = positions.map { sqlColumns[$0] }
        let names = (["id", "version", "updated_at", "deleted", "origin", "batch"] + columns).joined(separator: ", ")
        let selected = (["u.id", "u.version", "u.updated_at", "FALSE", "$4", "$5"] + positions.indices.map { "u.c\($0)" })
            .joined(separator: ", ")
        let arrays = (["$1::text[]", "$2::bigint[]", "$3::bigint[]"]
            + positions.enumerated().map { "$\($0.offset + 6)::\(Self.storageType(schema.columns[$0.element].type))[]" })
            .joined(separator: ", ")
        let aliases = (["id", "version", "updated_at"] + positions.indices.map { "c\($0)" }).joined(separator: ", ")
        let updates = (["version", "updated_at", "deleted", "origin", "batch"] + columns)
            .map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        return "INSERT INTO \(sqlTable) (\(names)) SELECT \(selected) FROM unnest(\(arrays)) AS u(\(aliases)) "
            + "ON CONFLICT (id) DO UPDATE SET \(updates)"
    }

    /// A delete of a batch's rows: a tombstone with every column cleared. Binds: `$1` ids,
    /// `$2` versions, `$3` updated_at (arrays), `$4` origin, `$5` batch.
    var delete: String {
        let cleared = sqlColumns.map { ", \($0) = NULL" }.joined()
        return "INSERT INTO \(sqlTable) (id, version, updated_at, deleted, origin, batch) "
            + "SELECT u.id, u.version, u.updated_at, TRUE, $4, $5 FROM unnest($1::text[], $2::bigint[], $3::bigint[]) "
            + "AS u(id, version, updated_at) ON CONFLICT (id) DO UPDATE SET version = excluded.version, "
            + "updated_at = excluded.updated_at, deleted = TRUE, origin = excluded.origin, batch = excluded.batch\(cleared)"
    }

    var createStatements: [String] {
        let columns = zip(sqlColumns, schema.columns).map { "\($0) \(Self.storageType($1.type))" }
        return [
            """
            CREATE TABLE \(sqlTable) (
                id TEXT NOT NULL PRIMARY KEY,
                version BIGINT NOT NULL UNIQUE,
                updated_at BIGINT NOT NULL,
                deleted BOOLEAN NOT NULL DEFAULT FALSE,
                origin TEXT NOT NULL,
                batch TEXT NOT NULL\(columns.isEmpty ? "" : ",\n    " + columns.joined(separator: ",\n    "))
            )
            """
        ]
    }

    /// A partial index of the tombstones by version, for compaction; created if missing at
    /// every start so that an older database gains it.
    var tombstoneIndexStatement: String {
        "CREATE INDEX IF NOT EXISTS \(Self.quote("t_\(schema.name)_tombstones")) ON \(sqlTable) (version) WHERE deleted"
    }

    /// The table's rows (an index-only scan of the version index) and its tombstones (of their
    /// partial index): what `/stats` shows. A `GROUP BY deleted` read every row instead, 140 ms
    /// at a million rows against 60 (docs/BENCHMARKS.md, "The cloud's `/stats`").
    var rowCountStatement: String { "SELECT COUNT(*) FROM \(sqlTable)" }
    var tombstoneCountStatement: String { "SELECT COUNT(*) FROM \(sqlTable) WHERE deleted" }

    func addColumnStatement(_ column: Column) -> String {
        "ALTER TABLE \(sqlTable) ADD COLUMN \(Self.quote("c_\(column.name)")) \(Self.storageType(column.type))"
    }

    /// How a column type is stored: booleans as integers 0/1, as the SQLite store does, so that
    /// both stores read and write values the same way.
    package static func storageType(_ type: ColumnType) -> String {
        switch type {
        case .text, .json, .object: "TEXT"
        case .integer, .boolean: "BIGINT"
        case .real: "DOUBLE PRECISION"
        case .blob: "BYTEA"
        }
    }

    /// Quotes an identifier that has already passed ``Identifier/isValidName(_:)``.
    static func quote(_ name: String) -> String { "\"\(name)\"" }
}
