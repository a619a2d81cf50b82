import DallyCore
import DallySync
import GRDB

/// Settles the accepted rows of one piece of an answer with a handful of set-based statements
/// instead of five per row: the common case of an answer, kept cheap so that a piece holds the
/// writer for little time.
///
/// The piece's accepted results whose in-flight record is still there (an earlier, interrupted
/// attempt applied the others) go into a temporary table with what the replica knows of each:
/// the first-dirty time and bytes of its outbox entry as the record mirrors them (time NULL: no
/// entry), and whether the row is unchanged since it was sent (its sequence number not above
/// the one the record holds). Unchanged rows take their version and leave the outbox; rows
/// written again while the batch flew stay pending on the new version, dirty since no earlier
/// than the batch was built; both lose their in-flight record, first (so that the outbox's
/// triggers have no in-flight row to keep up to date).
///
/// The unchanged rows leave the outbox in one statement (the outbox has no delete trigger since
/// schema v14; ``Outbox/remove(table:rowID:db:)`` uncounts the entries deleted one at a time):
/// the totals and the ages lose the same entries in set-based statements, from the mirrored
/// times and bytes, instead of four statements a row.
enum AcceptedRows {
    /// Creates the temporary table a piece is settled through, once, on the writer's connection
    /// as it opens (``DatabaseFiles/openPool(directory:name:synchronousFull:pragmas:writerStatements:)``).
    ///
    /// Not at each piece: GRDB empties a connection's cache of prepared statements after any
    /// statement that may change the schema, `CREATE TEMP TABLE IF NOT EXISTS` included, so
    /// that one statement per piece had every statement of the writer prepared again, these
    /// and the local writes' alike (7 % of the gateway's CPU in a drain went to SQLite's parser,
    /// docs/BENCHMARKS.md).
    static let scratchTable = """
        CREATE TEMP TABLE IF NOT EXISTS dally_accepted (
            id TEXT NOT NULL PRIMARY KEY, version INTEGER NOT NULL, at INTEGER, bytes INTEGER,
            unchanged INTEGER NOT NULL DEFAULT 0)
        """

    /// Applies `accepted` (`(id, version)` of one table) and returns how many were applied now.
    static func settle(
        _ accepted: [(id: String, version: Int64)], table: TableSQL, batchCreatedAt: Int64, db: Database
    ) throws -> Int {
        guard !accepted.isEmpty else { return 0 }
        let name = table.schema.name
        let rows = table.sqlTable
        // Each statement on its own, prepared once per connection. The piece's JSON is read
        // with what the replica knows of each row in one statement; `CROSS JOIN` keeps the
        // JSON the outer loop (left to itself, SQLite's planner scans the in-flight rows once
        // per JSON element). A row is unchanged while its sequence number is not above the one
        // its record holds: the batch's highest (its own, in records older than that).
        let read: (sql: String, arguments: StatementArguments)
        if let first = accepted.first?.version, accepted.enumerated().allSatisfy({ $1.version == first + Int64($0) }) {
            // A run of consecutive versions, as the cloud answers a batch it takes whole: the
            // ids alone, flat, each version from its position (no `json_extract` a row).
            read = (
                """
                INSERT INTO temp.dally_accepted (id, version, at, bytes, unchanged)
                SELECT r.row_id, ? + j.key, r.at, r.bytes, IFNULL(t.seq <= r.seq, 0)
                FROM json_each(?) AS j
                CROSS JOIN dally_inflight_rows AS r ON r.tbl = ? AND r.row_id = j.value
                LEFT JOIN \(rows) AS t ON t.id = r.row_id
                """, [first, JSONRows.strings(accepted.map(\.id)), name]
            )
        } else {
            read = (
                """
                INSERT INTO temp.dally_accepted (id, version, at, bytes, unchanged)
                SELECT r.row_id, json_extract(j.value, '$[1]'), r.at, r.bytes, IFNULL(t.seq <= r.seq, 0)
                FROM json_each(?) AS j
                CROSS JOIN dally_inflight_rows AS r ON r.tbl = ? AND r.row_id = json_extract(j.value, '$[0]')
                LEFT JOIN \(rows) AS t ON t.id = r.row_id
                """, [JSONRows.text(accepted) { [.text($0.id), .int($0.version)] }, name]
            )
        }
        let steps: [(sql: String, arguments: StatementArguments)] = [
            ("DELETE FROM temp.dally_accepted", []),
            read,
            (
                """
                UPDATE \(rows) SET version = a.version FROM temp.dally_accepted AS a
                WHERE a.unchanged AND \(rows).id = a.id
                """, []
            ),
            ("DELETE FROM dally_inflight_rows WHERE tbl = ? AND row_id IN (SELECT id FROM temp.dally_accepted)", [name]),
            (
                """
                UPDATE dally_outbox_totals SET
                    entries = entries - (SELECT COUNT(*) FROM temp.dally_accepted WHERE unchanged AND at IS NOT NULL),
                    bytes = bytes - (SELECT TOTAL(bytes) FROM temp.dally_accepted WHERE unchanged AND at IS NOT NULL)
                WHERE tbl = ?
                """, [name]
            ),
            (
                """
                UPDATE dally_outbox_ages SET entries = dally_outbox_ages.entries - gone.leaving
                FROM (SELECT at, COUNT(*) AS leaving FROM temp.dally_accepted WHERE unchanged AND at IS NOT NULL GROUP BY at)
                    AS gone
                WHERE dally_outbox_ages.tbl = ? AND dally_outbox_ages.at = gone.at
                """, [name]
            ),
            (
                """
                DELETE FROM dally_outbox_ages WHERE tbl = ? AND entries <= 0
                    AND at IN (SELECT at FROM temp.dally_accepted WHERE unchanged AND at IS NOT NULL)
                """, [name]
            ),
            (
                "DELETE FROM dally_outbox WHERE tbl = ? AND row_id IN (SELECT id FROM temp.dally_accepted WHERE unchanged)",
                [name]
            ),
            (
                """
                UPDATE dally_outbox SET
                    base_version = (SELECT a.version FROM temp.dally_accepted a WHERE a.id = dally_outbox.row_id),
                    first_dirty_at = MAX(first_dirty_at, ?)
                WHERE tbl = ? AND row_id IN (SELECT id FROM temp.dally_accepted WHERE NOT unchanged)
                """, [batchCreatedAt, name]
            ),
        ]
        for step in steps {
            try db.cachedStatement(sql: step.sql).execute(arguments: step.arguments)
        }
        return try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM temp.dally_accepted")) ?? 0
    }
}
