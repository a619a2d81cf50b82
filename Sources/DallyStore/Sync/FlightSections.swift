import GRDB

/// Which rows a batch in flight carries: one record per batch and table, not one per row.
///
/// A section keeps the ids it sent (a JSON array, in the order sent, in a table of their own:
/// written once, read rarely, and not rewritten when the section moves on), their lowest and highest,
/// the highest local sequence number the batch's tables held when it was read (a row is
/// unchanged since while its number is not above it: one counter for every table), and the
/// highest id whose result has been applied (`settled`). An answer is applied in pieces of
/// ascending ids per table, each piece's transaction moving `settled` on; so after a crash
/// between pieces the ids up to `settled` are known to be applied, and the retry applies only
/// the rest: an answer applies exactly once, as it did when each row had a record of its own.
///
/// A row is in flight while a section of its table holds its id above the section's `settled`.
/// Reads that need the whole set (a summary when a tally is stale, parked entries, `drop_oldest`'s
/// victims, a batch's rows wrapping round) ask ``flyingIDs(table:)`` once per statement, which
/// SQLite materialises once; the drain's own reads stop at ``highestInFlight(table:db:)``.
///
/// One record per section instead of per row: a drain's batch recorded and settled without
/// inserting, reading and deleting 5,000 records, and a local write's new outbox entry without
/// updating one (recording a batch took a third of the writer's time it took,
/// docs/BENCHMARKS.md, "In flight by section").
///
/// ```swift
/// try FlightSections.record(batch: id, table: "orders", ids: json, lowest: "a", highest: "f", seq: 42, db: db)
/// let sent = try FlightSections.sections(batch: id, db: db)  // [orders: (ids, seq, settled)]
/// ```
enum FlightSections {
    /// Moves the sections' ids to a table of their own (schema v19).
    ///
    /// A section's ids are written once and read rarely, its `settled` mark moved by every
    /// piece of its answer; in one record, each move rewrote the ids (a 5,000-row section's
    /// 190 KB of overflow pages, twenty times an answer) and each read of a range walked them
    /// to reach the columns stored after (docs/BENCHMARKS.md, "A section's ids apart").
    static let separateIDs = """
        CREATE TABLE dally_inflight_ids (
            batch TEXT NOT NULL, tbl TEXT NOT NULL, ids TEXT NOT NULL,
            PRIMARY KEY (batch, tbl)
        );
        INSERT INTO dally_inflight_ids (batch, tbl, ids) SELECT batch, tbl, ids FROM dally_inflight_sections;
        ALTER TABLE dally_inflight_sections DROP COLUMN ids;
        """

    /// The ids of the sections in flight, with their sections' columns: `s` and `i`'s
    /// columns, `i.ids` the JSON array.
    private static let withIDs = "dally_inflight_sections s JOIN dally_inflight_ids i ON i.batch = s.batch AND i.tbl = s.tbl"

    /// A subquery of the ids of `table`'s rows in flight, `table` a bound parameter or a
    /// literal (never a column of the outer query: SQLite would then run it again for each
    /// row instead of once).
    static func flyingIDs(table: String) -> String {
        """
        SELECT j.value FROM \(withIDs), json_each(i.ids) AS j
        WHERE s.tbl = \(table) AND (s.settled IS NULL OR j.value > s.settled)
        """
    }

    /// Records `batch`'s section of `table`.
    static func record(
        batch: String, table: String, ids: String, lowest: String, highest: String, seq: Int64, db: Database
    ) throws {
        try db.cachedStatement(
            sql: "INSERT INTO dally_inflight_sections (batch, tbl, lowest, highest, seq) VALUES (?, ?, ?, ?, ?)"
        ).execute(arguments: [batch, table, lowest, highest, seq])
        try db.cachedStatement(sql: "INSERT INTO dally_inflight_ids (batch, tbl, ids) VALUES (?, ?, ?)")
            .execute(arguments: [batch, table, ids])
    }

    /// The id range of each section in flight.
    static func ranges(db: Database) throws -> [IDRange] {
        try Row.fetchAll(db.cachedStatement(sql: "SELECT batch, tbl, lowest, highest FROM dally_inflight_sections"))
            .map { IDRange(batch: $0[0], table: $0[1], lowest: $0[2], highest: $0[3]) }
    }

    /// Whether a section of a batch not in `seen` (the batches in flight when a plan read the
    /// outbox) may share a row with `sections` (its id range meets one of theirs): the plan
    /// read the outbox without it, so it may have taken rows that batch carries already, and
    /// reads again.
    static func clashes(with sections: [IDRange], seen: Set<String>, db: Database) throws -> Bool {
        try ranges(db: db).contains { other in
            !seen.contains(other.batch)
                && sections.contains { $0.table == other.table && $0.lowest <= other.highest && other.lowest <= $0.highest }
        }
    }

    /// The highest id of `table` in flight, nil when none is: no row above it needs looking up.
    static func highestInFlight(table: String, db: Database) throws -> String? {
        try String.fetchOne(
            db.cachedStatement(sql: "SELECT MAX(highest) FROM dally_inflight_sections WHERE tbl = ?"), arguments: [table])
    }

    /// `batch`'s sections by table.
    static func sections(batch: String, db: Database) throws -> [String: Section] {
        var sections: [String: Section] = [:]
        for row in try Row.fetchAll(
            db.cachedStatement(sql: "SELECT s.tbl, i.ids, s.seq, s.settled FROM \(withIDs) WHERE s.batch = ?"),
            arguments: [batch])
        {
            sections[row[0]] = Section(ids: row[1], seq: row[2], settled: row[3])
        }
        return sections
    }

    /// How many rows `batch` carries that are not applied yet.
    static func rowsLeft(batch: String, db: Database) throws -> Int {
        try Int.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT COUNT(*) FROM \(withIDs), json_each(i.ids) AS j
                    WHERE s.batch = ? AND (s.settled IS NULL OR j.value > s.settled)
                    """),
            arguments: [batch]) ?? 0
    }

    /// Notes that the results of `table`'s rows in `batch` up to id `through` are applied.
    static func settle(batch: String, table: String, through: String, db: Database) throws {
        try db.cachedStatement(
            sql: "UPDATE dally_inflight_sections SET settled = ? WHERE batch = ? AND tbl = ? AND (settled IS NULL OR settled < ?)"
        ).execute(arguments: [through, batch, table, through])
    }

    /// Forgets `batch`'s sections: its flight ended.
    static func forget(batch: String, db: Database) throws {
        try db.cachedStatement(sql: "DELETE FROM dally_inflight_sections WHERE batch = ?").execute(arguments: [batch])
        try db.cachedStatement(sql: "DELETE FROM dally_inflight_ids WHERE batch = ?").execute(arguments: [batch])
    }

    /// Marks stale the tally (``FlightTally``) of each batch in flight that may carry `rowID`
    /// of `table`, whose outbox entry is about to change: its id within the section's range
    /// and not applied yet, and the row unchanged since the batch was read (`seq`, the row's
    /// number before this change; nil: not known, any section whose range holds the id).
    ///
    /// Every waiting row in a section's range was taken by it, except rows parked, held for
    /// their objects, or written after it was read (a higher number): so this marks a tally
    /// that did not need it only for those, and never misses one. One statement on a table
    /// of a few rows, for a local write that replaces a pending change (a new row, the common
    /// write in a drain, needs none).
    static func markTalliesStale(table: String, rowID: String, seq: Int64?, db: Database) throws {
        try db.cachedStatement(
            sql: """
                UPDATE dally_inflight_tallies SET ages = NULL
                WHERE tbl = ?1 AND ages IS NOT NULL AND batch IN (
                    SELECT batch FROM dally_inflight_sections
                    WHERE tbl = ?1 AND ?2 BETWEEN lowest AND highest AND (settled IS NULL OR ?2 > settled)
                        AND (?3 IS NULL OR ?3 <= seq))
                """
        ).execute(arguments: [table, rowID, seq])
    }

    /// One section as an answer reads it.
    struct Section: Sendable {
        /// The ids sent, a JSON array.
        let ids: String
        /// The highest sequence number the batch's tables held when it was read.
        let seq: Int64
        /// The highest id whose result is applied; nil: none is.
        let settled: String?
    }

    /// One section's id range.
    struct IDRange: Sendable, Equatable {
        let batch: String
        let table: String
        let lowest: String
        let highest: String
    }
}
