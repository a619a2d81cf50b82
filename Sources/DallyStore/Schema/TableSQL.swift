import DallyCore

/// The SQL text for one configured table, built once at open from names already validated
/// against the schema. Values never appear here; they are always bound parameters.
///
/// A table `orders` with columns `customer`, `total` is stored as
/// `"t_orders"(id, seq, updated_at, deleted, version, "c_customer", "c_total")`: the prefixes keep
/// user names apart from row metadata and from SQL keywords.
package struct TableSQL: StoredTable, Sendable {
    package let schema: TableSchema
    let sqlTable: String
    let sqlColumns: [String]
    /// `id, seq, updated_at, deleted, version, "c_…"…`: the order ``RowDecoding`` reads.
    let selectList: String
    let selectByID: String
    let upsert: String
    /// The scope a local write must stay in: the table's, when `scope_writes = "reject"`.
    let writeScope: TypedScope?

    init(schema: TableSchema) {
        self.schema = schema
        // The configuration checked the scope against this schema already.
        writeScope = schema.scopeWrites == .reject ? try? schema.scope?.validated(against: schema) : nil
        sqlTable = Self.quote("t_\(schema.name)")
        sqlColumns = schema.columns.map { Self.quote("c_\($0.name)") }
        let metadata = "id, seq, updated_at, deleted, version"
        selectList = ([metadata] + sqlColumns).joined(separator: ", ")
        selectByID = "SELECT \(selectList) FROM \(sqlTable) WHERE id = ?"
        let insertColumns = ([metadata] + sqlColumns).joined(separator: ", ")
        let placeholders = Array(repeating: "?", count: 5 + sqlColumns.count).joined(separator: ", ")
        let updates = (["seq", "updated_at", "deleted", "version"] + sqlColumns).map { "\($0) = excluded.\($0)" }
        upsert = """
            INSERT INTO \(sqlTable) (\(insertColumns)) VALUES (\(placeholders)) \
            ON CONFLICT(id) DO UPDATE SET \(updates.joined(separator: ", "))
            """
    }

    /// ``selectList`` with every column qualified by `alias`, for joins.
    func selectList(qualifiedBy alias: String) -> String {
        (["id", "seq", "updated_at", "deleted", "version"] + sqlColumns).map { "\(alias).\($0)" }.joined(separator: ", ")
    }

    /// `CREATE TABLE` for a table seen for the first time.
    package var createStatements: [String] {
        let columns = zip(sqlColumns, schema.columns).map { "\($0) \(Self.storageType($1.type))" }
        let indexName = Self.quote("t_\(schema.name)_seq")
        return [
            """
            CREATE TABLE \(sqlTable) (
                id TEXT NOT NULL PRIMARY KEY,
                seq INTEGER NOT NULL,
                updated_at INTEGER NOT NULL,
                deleted INTEGER NOT NULL DEFAULT 0,
                version INTEGER\(columns.isEmpty ? "" : ",\n    " + columns.joined(separator: ",\n    "))
            ) WITHOUT ROWID
            """,
            "CREATE UNIQUE INDEX \(indexName) ON \(sqlTable)(seq)",
        ]
    }

    /// Indexes upkeep reads by: tombstones by age (a partial index, small), and every row by
    /// age when the table has a retention period. Created if missing at each open, so that an
    /// older replica gains them.
    var lifecycleIndexStatements: [String] {
        var statements = [
            "CREATE INDEX IF NOT EXISTS \(Self.quote("t_\(schema.name)_tombstones")) ON \(sqlTable)(updated_at) WHERE deleted = 1"
        ]
        if schema.lifecycle.retain != nil {
            statements.append("CREATE INDEX IF NOT EXISTS \(Self.quote("t_\(schema.name)_updated")) ON \(sqlTable)(updated_at)")
        }
        // `drop_oldest` reads the table's oldest waiting entries in order: an index of the
        // table's outbox entries by age, only where the policy asks for it (every other table
        // drains without its cost; see `dally_outbox_ages`).
        if schema.lifecycle.onFull == .dropOldest {
            statements.append("""
                CREATE INDEX IF NOT EXISTS \(outboxAgeIndex) ON dally_outbox (first_dirty_at) WHERE \(outboxEntries)
                """)
        } else {
            statements.append("DROP INDEX IF EXISTS \(outboxAgeIndex)")
        }
        return statements
    }

    /// The partial index of this table's outbox entries by age (a `drop_oldest` table's).
    var outboxAgeIndex: String { Self.quote("dally_outbox_age_\(schema.name)") }

    /// This table's outbox entries, with the name written out: SQLite uses a partial index
    /// only for a query whose `WHERE` repeats the index's term, which a bound parameter cannot.
    /// The name has passed ``Identifier/isValidName(_:)``: letters, digits and `_`.
    var outboxEntries: String { "tbl = '\(schema.name)'" }

    package func addColumnStatement(_ column: Column) -> String {
        "ALTER TABLE \(sqlTable) ADD COLUMN \(Self.quote("c_\(column.name)")) \(Self.storageType(column.type))"
    }

    /// The SQL column for a configured column name; nil for a name the schema lacks.
    func sqlColumn(named name: String) -> String? {
        schema.columnIndex(name).map { sqlColumns[$0] }
    }

    package static func storageType(_ type: ColumnType) -> String {
        switch type {
        case .text, .json, .object: "TEXT"
        case .integer, .boolean: "INTEGER"
        case .real: "REAL"
        case .blob: "BLOB"
        }
    }

    /// Quotes an identifier that has already passed ``Identifier/isValidName(_:)``.
    package static func quote(_ name: String) -> String { "\"\(name)\"" }
}
