import GRDB

/// When each table was last brought up to date from the cloud, kept across restarts so that a
/// download period keeps counting from the last pull rather than from the start.
enum PullLog {
    static func times(db: Database) throws -> [String: Int64] {
        var times: [String: Int64] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT tbl, pulled_at FROM dally_pulls") { times[row[0]] = row[1] }
        return times
    }

    static func record(_ tables: [String], at now: Int64, db: Database) throws {
        for table in tables {
            try db.execute(
                sql: """
                    INSERT INTO dally_pulls (tbl, pulled_at) VALUES (?, ?)
                    ON CONFLICT(tbl) DO UPDATE SET pulled_at = excluded.pulled_at
                    """,
                arguments: [table, now])
        }
    }
}
