import GRDB

/// The SQL of the `dally_tinysync_marks` table (migration `v9-tinysync-marks`); the rules
/// it applies are ``TinySyncMarkRule``'s.
enum TinySyncMarks {
    /// Records a mark for `seq` at the rule's next time and prunes old marks, inside the
    /// caller's write transaction (which serialises the times).
    static func record(seq: Int64, now: Int64, db: Database) throws -> TinySyncMark {
        let latest = try Int64.fetchOne(db, sql: "SELECT MAX(at) FROM dally_tinysync_marks")
        let mark = TinySyncMark(at: TinySyncMarkRule.nextTime(now: now, latest: latest), seq: seq)
        try db.execute(sql: "INSERT INTO dally_tinysync_marks (at, seq) VALUES (?, ?)", arguments: [mark.at, mark.seq])
        try prune(now: mark.at, db: db)
        return mark
    }

    /// The sequence `time` resumes after (``TinySyncMarkRule/resumeSeq(for:marks:)``), by the
    /// primary key.
    static func resumeSeq(for time: Int64, db: Database) throws -> Int64? {
        let mark = try Row.fetchOne(
            db, sql: "SELECT at, seq FROM dally_tinysync_marks WHERE at <= ? ORDER BY at DESC LIMIT 1", arguments: [time]
        ).map { TinySyncMark(at: $0[0], seq: $0[1]) }
        return TinySyncMarkRule.resumeSeq(for: time, marks: mark.map { [$0] } ?? [])
    }

    /// All marks, oldest first; for tests and diagnostics.
    static func all(db: Database) throws -> [TinySyncMark] {
        try Row.fetchAll(db, sql: "SELECT at, seq FROM dally_tinysync_marks ORDER BY at")
            .map { TinySyncMark(at: $0[0], seq: $0[1]) }
    }

    private static func prune(now: Int64, db: Database) throws {
        // Only the marks beyond the dense ones are read: a few hundred at most once pruned.
        let old = try Row.fetchAll(
            db, sql: "SELECT at, seq FROM dally_tinysync_marks ORDER BY at DESC LIMIT -1 OFFSET ?",
            arguments: [TinySyncMarkRule.denseMarks]
        ).map { TinySyncMark(at: $0[0], seq: $0[1]) }
        guard !old.isEmpty else { return }
        for at in TinySyncMarkRule.prunable(old, now: now) {
            try db.execute(sql: "DELETE FROM dally_tinysync_marks WHERE at = ?", arguments: [at])
        }
    }
}
