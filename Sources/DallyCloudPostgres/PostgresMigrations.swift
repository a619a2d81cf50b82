import DallyCore
import Logging
import PostgresNIO

/// Brings a database to the store's layout at start: the store's own tables, then the
/// configured row tables (``ColumnPlan``), then one version counter row per table.
///
/// Idempotent, and safe when several nodes start at once: everything runs in one transaction
/// that first takes a transaction-scoped advisory lock, so a second node waits for the first
/// to commit and then finds nothing left to do.
enum PostgresMigrations {
    /// The advisory lock key every node takes to migrate ("dally" in ASCII).
    static let lockKey: Int64 = 0x64_61_6c_6c_79

    /// The store's own tables, by migration name, in order. A name once released never changes.
    static let steps: [(name: String, statements: [String])] = [
        (
            "cloud-v1",
            [
                """
                CREATE TABLE dally_columns (
                    tbl TEXT NOT NULL, position INTEGER NOT NULL, name TEXT NOT NULL, type TEXT NOT NULL,
                    PRIMARY KEY (tbl, name))
                """,
                // One counter per table: a batch locks the rows of the tables it writes for its
                // whole transaction (see PostgresBatchApplier).
                "CREATE TABLE cloud_tables (tbl TEXT NOT NULL PRIMARY KEY, version BIGINT NOT NULL)",
                // `results` is null while the batch that inserted the row is still applying.
                """
                CREATE TABLE cloud_batches (
                    gateway TEXT NOT NULL, batch TEXT NOT NULL, received_at BIGINT NOT NULL,
                    fingerprint BIGINT NOT NULL, results BYTEA, PRIMARY KEY (gateway, batch))
                """,
                "CREATE INDEX cloud_batches_received_at ON cloud_batches (received_at)",
                """
                CREATE TABLE cloud_dictionaries (
                    gateway TEXT NOT NULL, id BIGINT NOT NULL, tbl TEXT NOT NULL, bytes BYTEA NOT NULL,
                    created_at BIGINT NOT NULL, PRIMARY KEY (gateway, id))
                """,
                """
                CREATE TABLE cloud_objects (
                    hash TEXT NOT NULL PRIMARY KEY, size BIGINT NOT NULL, chunk_count BIGINT NOT NULL,
                    manifest BYTEA NOT NULL, created_at BIGINT NOT NULL)
                """,
                "CREATE INDEX cloud_objects_created_at ON cloud_objects (created_at)",
                """
                CREATE TABLE cloud_chunks (
                    hash TEXT NOT NULL PRIMARY KEY, bytes BYTEA NOT NULL, size BIGINT NOT NULL,
                    stored_at BIGINT NOT NULL)
                """,
                "CREATE INDEX cloud_chunks_stored_at ON cloud_chunks (stored_at)",
            ]
        ),
        (
            "cloud-v2-lifecycle",
            [
                // The horizon (highest version of a purged tombstone) beside the version, so
                // that one read gives both; gateways' cursors hold the horizon back.
                "ALTER TABLE cloud_tables ADD COLUMN horizon BIGINT NOT NULL DEFAULT 0",
                """
                CREATE TABLE cloud_gateway_cursors (
                    gateway TEXT NOT NULL, tbl TEXT NOT NULL, version BIGINT NOT NULL, seen_at BIGINT NOT NULL,
                    PRIMARY KEY (gateway, tbl))
                """,
            ]
        ),
        (
            "cloud-v3-declarations",
            [
                // What each gateway last told it declares (POST /v1/tables), for /stats.
                """
                CREATE TABLE cloud_gateway_declarations (
                    gateway TEXT NOT NULL PRIMARY KEY, document BYTEA NOT NULL, told_at BIGINT NOT NULL)
                """
            ]
        ),
    ]

    /// Migrates in one transaction on `connection`; returns every table's version.
    ///
    /// - Throws: ``PostgresStoreError`` when the configuration is incompatible with the stored
    ///   tables (``ColumnPlan/Refusal``).
    static func run(_ tables: [PostgresTableSQL], on connection: PostgresConnection, logger: Logger) async throws
        -> [String: Int64]
    {
        try await connection.query("BEGIN", logger: logger)
        do {
            let versions = try await migrate(tables, on: connection, logger: logger)
            try await connection.query("COMMIT", logger: logger)
            return versions
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error
        }
    }

    private static func migrate(_ tables: [PostgresTableSQL], on connection: PostgresConnection, logger: Logger)
        async throws -> [String: Int64]
    {
        try await connection.query("SELECT pg_advisory_xact_lock(\(lockKey))", logger: logger)
        try await connection.query(
            "CREATE TABLE IF NOT EXISTS dally_migrations (name TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())",
            logger: logger)
        var applied: Set<String> = []
        for try await name in try await connection.query("SELECT name FROM dally_migrations", logger: logger)
            .decode(String.self)
        {
            applied.insert(name)
        }
        for step in steps where !applied.contains(step.name) {
            for statement in step.statements { try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger) }
            try await connection.query("INSERT INTO dally_migrations (name) VALUES (\(step.name))", logger: logger)
        }

        var stored: [String: [(name: String, type: String)]] = [:]
        let rows = try await connection.query(
            "SELECT tbl, name, type FROM dally_columns ORDER BY tbl, position", logger: logger)
        for try await (table, name, type) in rows.decode((String, String, String).self) {
            stored[table, default: []].append((name, type))
        }
        let steps: [ColumnPlan.Step]
        do {
            steps = try ColumnPlan.steps(stored: stored, configured: tables.map(\.schema))
        } catch {
            throw PostgresStoreError(error.message)
        }
        let byName = Dictionary(tables.map { ($0.schema.name, $0) }, uniquingKeysWith: { first, _ in first })
        for step in steps {
            switch step {
            case .create(let schema):
                guard let table = byName[schema.name] else { continue }
                for statement in table.createStatements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await record(schema.columns, of: schema.name, from: 0, on: connection, logger: logger)
            case .add(let schema, let columns, let from):
                guard let table = byName[schema.name] else { continue }
                for column in columns {
                    try await connection.query(PostgresQuery(unsafeSQL: table.addColumnStatement(column)), logger: logger)
                }
                try await record(columns, of: schema.name, from: from, on: connection, logger: logger)
            }
        }

        for table in tables {
            try await connection.query(PostgresQuery(unsafeSQL: table.tombstoneIndexStatement), logger: logger)
            try await PostgresScopeSQL(table)?.install(on: connection, logger: logger)
        }

        var versions: [String: Int64] = [:]
        for table in tables {
            let name = table.schema.name
            try await connection.query(
                "INSERT INTO cloud_tables (tbl, version) VALUES (\(name), 0) ON CONFLICT (tbl) DO NOTHING", logger: logger)
            versions[name] = 0
        }
        for try await (table, version) in try await connection.query(
            "SELECT tbl, version FROM cloud_tables", logger: logger
        ).decode((String, Int64).self) {
            versions[table] = version
        }
        return versions
    }

    private static func record(
        _ columns: [Column], of table: String, from position: Int, on connection: PostgresConnection, logger: Logger
    ) async throws {
        for (offset, column) in columns.enumerated() {
            try await connection.query(
                "INSERT INTO dally_columns (tbl, position, name, type) VALUES (\(table), \(position + offset), \(column.name), \(column.type.rawValue))",
                logger: logger)
        }
    }
}
