import DallyCore
import DallySync
import GRDB
import GRDBSQLite

/// Settles the accepted rows of one piece of an answer with a handful of set-based statements
/// instead of five per row: the common case of an answer, kept cheap so that a piece holds the
/// writer for little time.
///
/// The piece's accepted results (none an earlier, interrupted attempt applied: the caller leaves
/// those out, ``FlightSections``) go into a temporary table with the first-dirty time and bytes
/// of the row's outbox entry (time NULL: no entry) and the sequence number its section holds,
/// the highest its table had when the batch was read. A row is unchanged since it was sent
/// while its sequence number is not above that one. Unchanged rows take their version and leave
/// the outbox; rows written again while the batch flew stay pending on the new version, dirty
/// since no earlier than the batch was built.
///
/// Whether any row of the piece was written again is first asked of the table as a whole: when
/// no row of it has a sequence number above the section's, none of the piece's rows can have
/// changed, and each row is not looked up a second time (the common case of a drain: a settle
/// 8 % cheaper, docs/BENCHMARKS.md). Otherwise each row's number is read.
///
/// The unchanged rows leave the outbox in one statement (the outbox has no delete trigger since
/// schema v14; ``Outbox/remove(table:rowID:previousSeq:mayBeInFlight:db:)`` uncounts the
/// entries deleted one at a time): the totals and the ages lose the same entries, from the
/// times and bytes read with them, in a statement per first-dirty time the piece holds, instead
/// of four statements a row.
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
            seq INTEGER NOT NULL, unchanged INTEGER NOT NULL DEFAULT 1)
        """

    /// Applies `accepted` (`(id, version)` of one table, answered in `batch`, none applied
    /// yet; `seq` the section's) and returns how many were applied.
    static func settle(
        _ accepted: [(id: String, version: Int64)], table: TableSQL, seq: Int64, batch: AnswerApplier.Flight,
        db: Database
    ) throws -> Int {
        guard !accepted.isEmpty else { return 0 }
        let name = table.schema.name
        let rows = table.sqlTable
        try run("DELETE FROM temp.dally_accepted", db: db)
        let (readSQL, readArguments) = read(accepted, table: name, seq: seq)
        try run(readSQL, readArguments, db: db)
        let count = db.changesCount
        guard count > 0 else { return 0 }
        // A write since the batch was read took a higher sequence number than its section holds
        // (one counter: the highest the batch's tables had then): a table with no number above
        // it has none of the piece's rows written again.
        var allUnchanged = try Bool.fetchOne(
            db.cachedStatement(
                sql: "SELECT NOT EXISTS (SELECT 1 FROM \(rows) WHERE seq > (SELECT MIN(seq) FROM temp.dally_accepted))")
        ) ?? false
        if !allUnchanged {
            try run(
                """
                UPDATE temp.dally_accepted SET unchanged =
                    IFNULL((SELECT t.seq FROM \(rows) AS t WHERE t.id = dally_accepted.id) <= dally_accepted.seq, 0)
                """, db: db)
        }
        try run(
            """
            UPDATE \(rows) SET version = a.version FROM temp.dally_accepted AS a
            WHERE a.unchanged AND \(rows).id = a.id
            """, db: db)
        if allUnchanged && db.changesCount < count {
            // A row gone from the table (none is, while its change flies) is not settled as
            // unchanged: its entry, if any, stays pending, as when each row is read.
            try run(
                """
                UPDATE temp.dally_accepted SET unchanged = 0
                WHERE NOT EXISTS (SELECT 1 FROM \(rows) AS t WHERE t.id = dally_accepted.id)
                """, db: db)
            allUnchanged = false
        }
        try uncount(table: name, batch: batch.id, db: db)
        // The outbox's stretch holds more than the piece only where entries wait that the batch
        // did not take: parked ones, rows held for their objects, rows written since, a section
        // that wrapped round to the table's first ids. Walked where none of the first two can be
        // and the piece is in id order; else each entry is searched for.
        let walk = try ascending(accepted) && !table.schema.policy.atomicSync && !hasParked(name, db: db)
        let leaving = allUnchanged ? "" : " WHERE unchanged"
        try run(
            "DELETE FROM dally_outbox WHERE tbl = ?\(walk ? stretch : "") AND row_id IN (SELECT id FROM temp.dally_accepted\(leaving))",
            [name], db: db)
        if !allUnchanged {
            try run(
                """
                UPDATE dally_outbox SET
                    base_version = (SELECT a.version FROM temp.dally_accepted a WHERE a.id = dally_outbox.row_id),
                    first_dirty_at = MAX(first_dirty_at, ?)
                WHERE tbl = ? AND row_id IN (SELECT id FROM temp.dally_accepted WHERE NOT unchanged)
                """, [batch.createdAt, name], db: db)
        }
        return count
    }

    /// The statement that reads the piece into the temporary table, with each row's outbox
    /// entry. `CROSS JOIN` keeps the JSON the outer loop.
    private static func read(
        _ accepted: [(id: String, version: Int64)], table: String, seq: Int64
    ) -> (sql: String, arguments: StatementArguments) {
        if let first = accepted.first?.version, accepted.enumerated().allSatisfy({ $1.version == first + Int64($0) }) {
            // A run of consecutive versions, as the cloud answers a batch it takes whole: the
            // ids alone, flat, each version from its position (no `json_extract` a row).
            return (
                """
                INSERT INTO temp.dally_accepted (id, version, at, bytes, seq)
                SELECT j.value, ? + j.key, o.first_dirty_at, IFNULL(o.bytes, 0), ?
                FROM json_each(?) AS j
                LEFT JOIN dally_outbox AS o ON o.tbl = ? AND o.row_id = j.value
                """, [first, seq, JSONRows.strings(accepted.map(\.id)), table]
            )
        }
        return (
            """
            INSERT INTO temp.dally_accepted (id, version, at, bytes, seq)
            SELECT json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'), o.first_dirty_at, IFNULL(o.bytes, 0), ?
            FROM json_each(?) AS j
            LEFT JOIN dally_outbox AS o ON o.tbl = ? AND o.row_id = json_extract(j.value, '$[0]')
            """, [seq, JSONRows.text(accepted) { [.text($0.id), .int($0.version)] }, table]
        )
    }

    /// Takes the unchanged rows' entries off the outbox's totals and ages, from their times and
    /// bytes, and every entry of the piece off its batch's tally (``FlightTally``).
    ///
    /// One pass over the piece groups its leaving entries by first-dirty time. Entries written
    /// together share a time (a commit's), so a piece nearly always has a few: each is one
    /// keyed update of its age, the ages left empty go in one statement, and the totals take
    /// one update of known amounts. Only a piece of many times (rows written one commit apiece)
    /// updates the ages in a set-based statement, cheaper than a statement a time there. Three
    /// passes over the piece went to the same end before (docs/BENCHMARKS.md, "Deleted by
    /// stretch").
    private static func uncount(table: String, batch: String, db: Database) throws {
        // Scanned and grouped here: SQLite's GROUP BY sorter cost several times the scan itself.
        let scan = try db.cachedStatement(sql: "SELECT at, bytes, unchanged FROM temp.dally_accepted WHERE at IS NOT NULL")
        let cursor = try Row.fetchCursor(scan)
        let row = scan.sqliteStatement
        var groups: [Int64: Int64] = [:]
        var entries: Int64 = 0
        var bytes: Int64 = 0
        var landed = FlightTally()
        while try cursor.next() != nil {
            let at = sqlite3_column_int64(row, 0)
            let size = sqlite3_column_int64(row, 1)
            landed.add(at: at, bytes: size)
            guard sqlite3_column_int64(row, 2) != 0 else { continue }
            groups[at, default: 0] += 1
            entries += 1
            bytes += size
        }
        try FlightTally.take(landed, table: table, batch: batch, db: db)
        guard entries > 0 else { return }
        try run(
            "UPDATE dally_outbox_totals SET entries = entries - ?, bytes = bytes - ? WHERE tbl = ?",
            [entries, bytes, table], db: db)
        guard groups.count <= fewAges else {
            try run(
                """
                UPDATE dally_outbox_ages SET entries = dally_outbox_ages.entries - gone.leaving
                FROM (SELECT at, COUNT(*) AS leaving FROM temp.dally_accepted WHERE unchanged AND at IS NOT NULL GROUP BY at)
                    AS gone
                WHERE dally_outbox_ages.tbl = ? AND dally_outbox_ages.at = gone.at
                """, [table], db: db)
            try run(
                """
                DELETE FROM dally_outbox_ages WHERE tbl = ? AND entries <= 0
                    AND at IN (SELECT at FROM temp.dally_accepted WHERE unchanged AND at IS NOT NULL)
                """, [table], db: db)
            return
        }
        let age = try db.cachedStatement(sql: "UPDATE dally_outbox_ages SET entries = entries - ? WHERE tbl = ? AND at = ?")
        var times: [Int64] = []
        for (at, leaving) in groups {
            try age.execute(values: [leaving.databaseValue, table.databaseValue, at.databaseValue])
            times.append(at)
        }
        // The times flat, `[t, …]`: `json_each` hands each as its value, with no path to read.
        try run(
            "DELETE FROM dally_outbox_ages WHERE tbl = ? AND at IN (SELECT value FROM json_each(?)) AND entries <= 0",
            [table, "[" + times.map(String.init).joined(separator: ",") + "]"], db: db)
    }

    /// Up to how many first-dirty times a piece's ages are updated one keyed statement each.
    static let fewAges = 32

    /// Bounds a delete to the stretch of ids from the piece's lowest to its highest.
    private static let stretch = """
         AND row_id BETWEEN (SELECT MIN(id) FROM temp.dally_accepted) AND (SELECT MAX(id) FROM temp.dally_accepted)
        """

    /// Whether the piece's ids rise throughout, as a section's do unless it wrapped round.
    private static func ascending(_ accepted: [(id: String, version: Int64)]) -> Bool {
        zip(accepted, accepted.dropFirst()).allSatisfy { $0.id < $1.id }
    }

    private static func hasParked(_ table: String, db: Database) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT EXISTS (SELECT 1 FROM dally_outbox INDEXED BY dally_outbox_parked
                        WHERE tbl = ? AND parked IS NOT NULL)
                    """),
            arguments: [table]) ?? true
    }

    /// Runs one statement, prepared once per connection.
    private static func run(_ sql: String, _ arguments: StatementArguments = [], db: Database) throws {
        try db.cachedStatement(sql: sql).execute(arguments: arguments)
    }
}
