import DallyCore
import GRDB

/// Changes the cloud refused because it lacks their table or a column of it (`unknown_table`,
/// `unknown_column`): a gateway whose declaration is ahead of its cloud's, as in a rolling
/// schema upgrade done in the wrong order, when the cloud is too old to list its declarations
/// (a newer one's gateway keeps such changes until it declares them, `DeclarationCheck`).
/// Such a refusal ends once the cloud's declaration catches up, so, unlike other refusals,
/// its changes do not wait for a person to settle them.
///
/// They park with their error record like any refusal (so `/v1/conflicts` shows what happened
/// and why), and every so often, or when a sync-now asks for the table, one of them per table
/// goes again as a probe (``probe(table:db:)``). When the cloud accepts a change of the table
/// (the probe, or any other), the rest go too (``release(table:db:)``): a section carries every
/// column the gateway declares, so an accepted one proves the cloud takes them all. While the
/// cloud still refuses, the probe costs one row's bytes a period.
enum SchemaRefusals {
    /// What selects the open records of these refusals; the partial index
    /// `dally_conflicts_schema` (schema v17) holds exactly them.
    static let openRecords = "status = 'open' AND kind = 'error' AND error_code IN ('unknown_table', 'unknown_column')"

    /// Lets the oldest refused change of each table (of `table` only, when given) go again;
    /// returns the tables probed.
    static func probe(table: String? = nil, db: Database) throws -> [String] {
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT tbl, row_id FROM dally_conflicts c
                WHERE \(openRecords) AND (?1 IS NULL OR tbl = ?1)
                    AND detected_at = (SELECT MIN(detected_at) FROM dally_conflicts d WHERE d.tbl = c.tbl AND d.\(openRecords))
                GROUP BY tbl
                """,
            arguments: [table])
        for row in rows {
            try retry(row["row_id"], table: row["tbl"], db: db)
        }
        return rows.map { $0["tbl"] }
    }

    /// Lets every refused change of `table` go again, once the cloud accepted one of its
    /// changes; returns how many.
    @discardableResult
    static func release(table: String, db: Database) throws -> Int {
        let ids = try String.fetchAll(
            db.cachedStatement(sql: "SELECT row_id FROM dally_conflicts WHERE tbl = ? AND \(openRecords)"),
            arguments: [table])
        for id in ids { try retry(id, table: table, db: db) }
        return ids.count
    }

    private static func retry(_ id: String, table: String, db: Database) throws {
        try db.execute(sql: "DELETE FROM dally_conflicts WHERE tbl = ? AND row_id = ?", arguments: [table, id])
        try db.execute(
            sql: "UPDATE dally_outbox SET parked = NULL WHERE tbl = ? AND row_id = ? AND parked = 'error'",
            arguments: [table, id])
    }
}
