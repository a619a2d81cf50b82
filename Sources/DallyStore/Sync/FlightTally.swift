import Foundation
import GRDB
import GRDBSQLite

/// What one table's rows in one batch in flight hold of the outbox: how many entries, their
/// bytes, and how many at each first-dirty time. Kept beside the batch's sections
/// (``FlightSections``), so that a summary (`/stats`, `/metrics`, the scheduler's decision) adds
/// up a few tallies instead of reading the entry of every row in flight.
///
/// A drain holds three 5,000-row batches in flight, and the scan of their 15,000 rows was two
/// thirds of a `/stats` request (docs/BENCHMARKS.md, "Stats while batches fly"). A tally is
/// made once, from the entries the batch's plan read; each settled piece of the answer takes
/// its rows' share off it, and the batch's end deletes it. An entry in flight changed in
/// between (its row written again, or its entry removed, while the batch flies:
/// ``FlightSections/markTalliesStale(table:rowID:seq:db:)``) marks the tally stale, as does a
/// batch with more first-dirty times than ``maxAges``; then the summary counts the entries of
/// the rows in flight, as before tallies.
///
/// ```swift
/// var tally = FlightTally()
/// tally.add(at: 1_700_000_000_000, bytes: 120)
/// try FlightTally.keep(tally, table: "orders", batch: batchID, db: db)
/// let flying = try FlightTally.read(table: "orders", db: db)  // nil: a tally is stale
/// ```
struct FlightTally {
    private(set) var entries: Int64 = 0
    private(set) var bytes: Int64 = 0
    /// Entries by first-dirty time.
    private(set) var byAge: [Int64: Int64] = [:]

    /// The most first-dirty times a tally keeps: a batch of rows each written in a commit of
    /// its own has thousands, and counting its entries is then as cheap as reading them back.
    static let maxAges = 64

    /// Counts one entry of `bytes`, dirty since `at`.
    mutating func add(at: Int64, bytes: Int64) {
        entries += 1
        self.bytes += bytes
        byAge[at, default: 0] += 1
    }

    /// Adds `other`'s counts to these.
    mutating func add(_ other: FlightTally) {
        entries += other.entries
        bytes += other.bytes
        byAge.merge(other.byAge, uniquingKeysWith: +)
    }

    /// Takes `leaving`'s counts off these, dropping the times left with no entry.
    mutating func subtract(_ leaving: FlightTally) {
        entries -= leaving.entries
        bytes -= leaving.bytes
        for (at, count) in leaving.byAge {
            let left = byAge[at, default: 0] - count
            byAge[at] = left > 0 ? left : nil
        }
    }

    /// Keeps `tally` for `table`'s rows in `batch`: stale when it has more times than
    /// ``maxAges``, or when `stale` says it may no longer match the entries.
    static func keep(_ tally: FlightTally, table: String, batch: String, stale: Bool = false, db: Database) throws {
        try db.cachedStatement(
            sql: "INSERT OR REPLACE INTO dally_inflight_tallies (tbl, batch, entries, bytes, ages) VALUES (?, ?, ?, ?, ?)"
        ).execute(arguments: [table, batch, tally.entries, tally.bytes, stale ? nil : tally.packedAges])
    }

    /// `table`'s entries in flight counted from the outbox entries of the rows its sections
    /// carry (``FlightSections``), by time only up to `agesThrough` (a summary reads the oldest
    /// times alone): what a summary counts when a tally is stale.
    static func counted(table: String, agesThrough: Int64, db: Database) throws -> FlightTally {
        try scanned(
            """
            SELECT first_dirty_at, bytes FROM dally_outbox
            WHERE tbl = ?1 AND row_id IN (\(FlightSections.flyingIDs(table: "?1")))
            """, [table], agesThrough: agesThrough, db: db)
    }

    /// The tally of the `(at, bytes)` rows `sql` reads, counted here: SQLite's `GROUP BY` put
    /// every record through a sorter, several times the cost of the scan itself.
    private static func scanned(
        _ sql: String, _ arguments: StatementArguments, agesThrough: Int64, db: Database
    ) throws -> FlightTally {
        let scan = try db.cachedStatement(sql: sql)
        let cursor = try Row.fetchCursor(scan, arguments: arguments)
        let row = scan.sqliteStatement
        var tally = FlightTally()
        while try cursor.next() != nil {
            let at = sqlite3_column_int64(row, 0)
            tally.entries += 1
            tally.bytes += sqlite3_column_int64(row, 1)
            if at <= agesThrough { tally.byAge[at, default: 0] += 1 }
        }
        return tally
    }

    /// Takes `leaving` (entries of `table`'s rows in `batch` whose results are being applied)
    /// off its tally, unless that tally is stale.
    static func take(_ leaving: FlightTally, table: String, batch: String, db: Database) throws {
        guard leaving.entries > 0,
            let row = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT entries, bytes, ages FROM dally_inflight_tallies WHERE tbl = ? AND batch = ?"),
                arguments: [table, batch]),
            var tally = try unpacked(row)
        else { return }
        tally.subtract(leaving)
        try keep(tally, table: table, batch: batch, db: db)
    }

    /// Forgets the tallies of `batch`, whose flight ended.
    static func forget(batch: String, db: Database) throws {
        // A scan: the tallies are a few rows (tables times batches in flight).
        try db.cachedStatement(sql: "DELETE FROM dally_inflight_tallies WHERE batch = ?").execute(arguments: [batch])
    }

    /// `table`'s entries in flight, added up from the tallies of the batches that carry it; nil
    /// when one of them is stale (the entries in flight must be counted).
    static func read(table: String, db: Database) throws -> FlightTally? {
        var total = FlightTally()
        let rows = try Row.fetchCursor(
            db.cachedStatement(sql: "SELECT entries, bytes, ages FROM dally_inflight_tallies WHERE tbl = ?"),
            arguments: [table])
        while let row = try rows.next() {
            // Below zero only if a way out of flight missed its tally: count the entries then.
            guard let tally = try unpacked(row), tally.entries >= 0, tally.bytes >= 0 else { return nil }
            total.add(tally)
        }
        return total
    }

    /// The ages as kept: each time and its count, two little-endian 64-bit integers; nil
    /// (stale) past ``maxAges`` times.
    private var packedAges: Data? {
        guard byAge.count <= Self.maxAges else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(byAge.count * 16)
        for (at, count) in byAge.sorted(by: { $0.key < $1.key }) {
            withUnsafeBytes(of: at.littleEndian) { bytes.append(contentsOf: $0) }
            withUnsafeBytes(of: count.littleEndian) { bytes.append(contentsOf: $0) }
        }
        return Data(bytes)
    }

    /// The tally in a row of `entries, bytes, ages`; nil when it is stale.
    private static func unpacked(_ row: Row) throws -> FlightTally? {
        guard let ages: Data = row[2] else { return nil }
        guard ages.count % 16 == 0 else {
            throw StoreError("a batch in flight's tally is damaged (\(ages.count) bytes of ages); the replica's file is damaged")
        }
        var tally = FlightTally(entries: row[0], bytes: row[1])
        ages.withUnsafeBytes { raw in
            for offset in stride(from: 0, to: raw.count, by: 16) {
                let at = Int64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: Int64.self))
                let count = Int64(littleEndian: raw.loadUnaligned(fromByteOffset: offset + 8, as: Int64.self))
                tally.byAge[at] = count
            }
        }
        return tally
    }

    private init(entries: Int64, bytes: Int64) {
        self.entries = entries
        self.bytes = bytes
    }

    init() {}
}
