import DallyCore
import GRDB

extension ReplicaStore {
    /// Purges tombstones older than each table's `tombstone_ttl` and removes synced rows older
    /// than its `retain`, in pieces of at most `syncPieceRows` rows so that local writes never
    /// wait long behind upkeep.
    ///
    /// Only clean rows go: a tombstone or row with a change the cloud has not accepted (dirty,
    /// in flight or parked) has a null version and stays. A purged tombstone moves the table's
    /// horizon to its sequence number, before the piece commits, so that a local reader who
    /// could have missed it is told to resync (``requireCursor(_:tables:)``). Retained rows are
    /// removed without tombstones: the cloud keeps them, and nothing goes upstream.
    ///
    /// - Parameter now: milliseconds since 1970; ages are measured by each row's `updated_at`.
    public func compact(now: Int64) async throws -> CompactionReport {
        var report = CompactionReport()
        for table in tables.values.sorted(by: { $0.schema.name < $1.schema.name }) {
            let lifecycle = table.schema.lifecycle
            let cutoff = now - lifecycle.tombstoneTTL.milliseconds
            let purged = try await removeInPieces(table, tombstones: true, before: cutoff)
            if purged > 0 { report.tombstonesPurged[table.schema.name] = purged }
            if let retain = lifecycle.retain {
                let removed = try await removeInPieces(table, tombstones: false, before: now - retain.milliseconds)
                if removed > 0 { report.retainedRemoved[table.schema.name] = removed }
            }
        }
        if !report.isEmpty { try await returnFreePages() }
        return report
    }

    /// Removes, piece by piece, the clean tombstones (or, with `tombstones` false, the clean
    /// live rows) of `table` last changed before `cutoff`; returns how many.
    private func removeInPieces(_ table: TableSQL, tombstones: Bool, before cutoff: Int64) async throws -> Int64 {
        let name = table.schema.name
        // A local-only table's rows never get a cloud version; all of them are clean.
        let clean = table.schema.policy.localOnly ? "1" : "version IS NOT NULL"
        let select = """
            SELECT id, seq FROM \(table.sqlTable) INDEXED BY \(TableSQL.quote(tombstones ? "t_\(name)_tombstones" : "t_\(name)_updated"))
            WHERE deleted = \(tombstones ? 1 : 0) AND updated_at < ? AND \(clean) LIMIT ?
            """
        let pieceRows = syncPieceRows
        var total: Int64 = 0
        while true {
            let removed = try await groupCommit.perform(lane: .sync(.upkeep)) { db, context -> Int64 in
                let victims = try Row.fetchAll(db.cachedStatement(sql: select), arguments: [cutoff, pieceRows])
                guard !victims.isEmpty else { return 0 }
                let highest = victims.map { $0[1] as Int64 }.max() ?? 0
                if tombstones { self.raiseHorizon(name, to: highest) }
                for victim in victims {
                    let id: String = victim[0]
                    try db.execute(sql: "DELETE FROM \(table.sqlTable) WHERE id = ?", arguments: [id])
                    if !tombstones {
                        try db.execute(sql: "DELETE FROM dally_object_refs WHERE tbl = ? AND row_id = ?", arguments: [name, id])
                    }
                }
                let count = Int64(victims.count)
                if tombstones {
                    context.count(name, tombstones: -count)
                    try LifecycleLedger.add(name, horizon: highest, tombstonesPurged: count, db: db)
                } else {
                    context.count(name, live: -count)
                    try LifecycleLedger.add(name, retainedRemoved: count, db: db)
                }
                return count
            }
            total += removed
            if removed < pieceRows { return total }
        }
    }

    /// Gives the pages upkeep freed back to the filesystem (the replica is created with
    /// `auto_vacuum = INCREMENTAL`; on an older file without it this does nothing).
    private func returnFreePages() async throws {
        try await groupCommit.perform(lane: .sync(.upkeep)) { db, _ in
            try db.execute(sql: "PRAGMA incremental_vacuum(4096)")
        }
    }

    /// Each table's horizon, compaction counts and resync counts, as kept on disk.
    public func lifecycle() async throws -> [String: LifecycleLedger] {
        try await pool.read { db in try LifecycleLedger.all(db: db) }
    }

    /// Throws `resync_required` when a local reader's cursor `since` is behind the horizon of
    /// one of `tables`: tombstones after it were purged, so the reader could keep rows that were
    /// deleted. A cursor of 0 (a reader starting afresh) is never behind.
    public func requireCursor(_ since: Int64, tables names: [String]) throws(DallyError) {
        guard since > 0 else { return }
        let horizons = self.horizons.withLock { $0 }
        for name in names {
            guard let horizon = horizons[name], since < horizon else { continue }
            throw DallyError(
                .resyncRequired,
                "cursor since=\(since) is behind table '\(name)''s horizon \(horizon): tombstones up to it were "
                    + "purged (tombstone_ttl). Drop your copy of the table and read it again from since=0",
                field: "since", horizon: horizon)
        }
    }

    /// Throws `resync_required` when a local reader's cursor `since` is ahead of every change
    /// this replica holds: the cursor was given by a replica this one is not (the data
    /// directory restored from an older backup, or a new one in its place), and the changes
    /// made here up to it would pass the reader by.
    ///
    /// The commit ledger learns of a commit just after it: only a cursor ahead of the ledger is
    /// checked against the count the replica commits with its changes.
    public func requireKnownCursor(_ since: Int64) async throws {
        guard since > lastSeq else { return }
        let committed = try await pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT value FROM dally_meta WHERE key = 'last_seq'") ?? 0
        }
        let latest = max(committed, lastSeq)
        guard since > latest else { return }
        throw DallyError(
            .resyncRequired,
            "cursor since=\(since) is ahead of this gateway's latest change (\(latest)): the cursor came from "
                + "another replica, or this one was restored from an older backup. Drop your copy of the table "
                + "and read it again from since=0",
            field: "since", horizon: latest)
    }

    func raiseHorizon(_ table: String, to seq: Int64) {
        horizons.withLock { $0[table] = max($0[table] ?? 0, seq) }
    }
}
