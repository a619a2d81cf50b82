import GRDB

/// One table's outbox entries that do not wait to be sent: in a batch in flight, parked by a
/// conflict or an error, or held back until their objects are in the cloud.
///
/// They are few (a few batches' worth) while the outbox may hold millions, so ``Outbox``
/// counts them and takes them from the totals and ages the triggers keep, rather than reading
/// what waits.
struct StalledEntries {
    private(set) var entries: Int64 = 0
    private(set) var bytes: Int64 = 0
    private(set) var inFlight: Int64 = 0
    /// Parked entries, those in flight among them.
    private(set) var parked: Int64 = 0
    private(set) var held: Int64 = 0
    /// How many entries there are at each first-dirty time, up to the time asked for.
    private(set) var countsByAge: [Int64: Int64] = [:]

    /// `table`'s stalled entries, counted by first-dirty time up to `countedThrough` (each
    /// later entry counts in the totals only); `atomic` when its rows wait for their objects.
    ///
    /// Each entry is read once, in the first of its states (in flight, parked, held). The
    /// in-flight ones, a few batches' worth, are added up from their batches' tallies, or
    /// scanned and counted here (``countInFlight(_:countedThrough:db:)``); SQLite counts the
    /// parked and held ones, which are fewer still, one row per counted time and one for the
    /// rest.
    static func read(_ table: String, atomic: Bool, countedThrough: Int64, db: Database) throws -> StalledEntries {
        let notInFlight = "o.row_id NOT IN (\(FlightSections.flyingIDs(table: "?1")))"
        let held = !atomic ? "" : """
            UNION ALL
            SELECT at, 1, bytes, 0, 1 FROM (
                SELECT DISTINCT o.row_id, o.first_dirty_at AS at, o.bytes AS bytes FROM dally_object_uploads u
                JOIN dally_object_refs f ON f.hash = u.hash
                CROSS JOIN dally_outbox o ON o.tbl = f.tbl AND o.row_id = f.row_id
                WHERE o.tbl = ?1 AND o.parked IS NULL AND \(notInFlight))
            """
        var stalled = StalledEntries()
        try stalled.countInFlight(table, countedThrough: countedThrough, db: db)
        // A parked entry counts as an entry here only when it is not in flight (it was
        // counted above), and as parked either way.
        let sql = """
            SELECT CASE WHEN at <= ?2 THEN at END AS near, SUM(counted), SUM(bytes), SUM(parked), SUM(held)
            FROM (
                SELECT at, NOT flying AS counted, bytes * NOT flying AS bytes, 1 AS parked, 0 AS held
                FROM (
                    SELECT o.first_dirty_at AS at, o.bytes AS bytes, NOT \(notInFlight) AS flying
                    FROM dally_outbox o INDEXED BY dally_outbox_parked WHERE o.tbl = ?1 AND o.parked IS NOT NULL)
                \(held)
            ) GROUP BY near
            """
        for row in try Row.fetchAll(db.cachedStatement(sql: sql), arguments: [table, countedThrough]) {
            stalled.addParkedOrHeld(at: row[0], count: row[1], bytes: row[2], parked: row[3], held: row[4])
        }
        return stalled
    }

    /// Counts `table`'s in-flight entries, by time up to `countedThrough` and in one sum for
    /// the rest: from the tallies of the batches that carry it (``FlightTally``), or, when one
    /// is stale, from the entries of the rows in flight (``FlightSections``).
    ///
    /// A drain's three batches in flight (15,000 records) cost `/stats` 15 ms through SQLite's
    /// `GROUP BY`, 9–10 ms scanned and counted in Swift, and 3.3 ms from the tallies
    /// (docs/BENCHMARKS.md, "Stats while batches fly", "Tallies in flight").
    private mutating func countInFlight(_ table: String, countedThrough: Int64, db: Database) throws {
        let tally = try FlightTally.read(table: table, db: db)
            ?? FlightTally.counted(table: table, agesThrough: countedThrough, db: db)
        entries += tally.entries
        bytes += tally.bytes
        inFlight += tally.entries
        for (at, count) in tally.byAge where at <= countedThrough { countsByAge[at, default: 0] += count }
    }

    /// Adds a row of the parked and held entries' counts: `count` and `bytes` of those not in
    /// flight (counted already), at `at` (nil: past the counted times).
    private mutating func addParkedOrHeld(at: Int64?, count: Int64, bytes: Int64, parked: Int64, held: Int64) {
        entries += count
        self.bytes += bytes
        self.parked += parked
        self.held += held
        if let at, count > 0 { countsByAge[at, default: 0] += count }
    }
}
