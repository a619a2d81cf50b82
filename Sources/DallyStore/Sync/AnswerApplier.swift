import DallyCore
import DallySync
import GRDB

/// Applies the cloud's answer to a batch in flight, in pieces of a bounded number of rows,
/// then ends the batch's flight.
///
/// Each piece is one transaction: its rows' outcomes are applied, in ascending ids per table,
/// and each section's `settled` id moves on with them (``FlightSections``). A row at or below
/// it was applied by an earlier attempt that stopped between pieces (a crash, a kill): the
/// batch stays in flight until its last piece, is resent with the same id, the cloud answers
/// it again from its record, and only the rows not applied yet are applied. So an answer
/// applies exactly once, however its pieces are interrupted. The last step deletes the batch's
/// record and notes its pulls.
///
/// A row changed locally again after the batch was built keeps its outbox entry: the new
/// pending state goes up next, based on the version the cloud just assigned.
enum AnswerApplier {
    /// The batch being answered, as recorded in flight; nil when it is not in flight.
    static func flight(_ batchID: String, db: Database) throws -> Flight? {
        guard let row = try Row.fetchOne(
            db, sql: "SELECT created_at, pulls FROM dally_inflight WHERE batch = ?", arguments: [batchID])
        else { return nil }
        return Flight(
            id: batchID, createdAt: row["created_at"], pulls: (row["pulls"] as String?).map(names) ?? [],
            sections: try FlightSections.sections(batch: batchID, db: db))
    }

    /// The results of `answer` still to apply, in the order they are applied: per table (in
    /// name order) those of rows the batch carries and has not applied yet, once each, in
    /// ascending ids.
    static func pending(_ answer: BatchAnswer, of batch: Flight) throws -> [(table: String, result: BatchAnswer.RowResult)] {
        var results: [(table: String, result: BatchAnswer.RowResult)] = []
        results.reserveCapacity(answer.results.reduce(0) { $0 + $1.rows.count })
        for section in answer.results.sorted(by: { $0.table < $1.table }) {
            guard let sent = batch.sections[section.table] else { continue }
            let ascending = !zip(section.rows, section.rows.dropFirst()).contains { $0.id >= $1.id }
            // The common answer: every id sent, in the ascending order sent, none applied yet.
            if ascending, sent.settled == nil, JSONRows.holds(exactly: section.rows.lazy.map(\.id), json: sent.ids) {
                results.append(contentsOf: section.rows.lazy.map { (section.table, $0) })
                continue
            }
            let rows = ascending ? section.rows : section.rows.sorted { $0.id < $1.id }
            let carried = Set(try JSONRows.decodeStrings(sent.ids))
            var previous: String?
            for row in rows where row.id != previous {
                previous = row.id
                if let settled = sent.settled, row.id <= settled { continue }
                guard carried.contains(row.id) else { continue }
                results.append((section.table, row))
            }
        }
        return results
    }

    /// Applies one piece of the answer's row results: accepted rows set-based, per table
    /// (``AcceptedRows``), conflicts and rejections one by one.
    static func apply(
        _ piece: ArraySlice<(table: String, result: BatchAnswer.RowResult)>, batch: Flight,
        tables: [String: TableSQL], db: Database, context: inout CommitContext
    ) throws -> SyncReport {
        var report = SyncReport()
        var accepted: [String: [(id: String, version: Int64)]] = [:]
        for (name, result) in piece {
            guard let table = tables[name] else { continue }
            if case .accepted(let id, let version) = result {
                accepted[name, default: []].append((id, version))
            } else {
                try apply(result, batch: batch, table: table, db: db, context: &context, report: &report)
            }
        }
        for (name, rows) in accepted {
            guard let table = tables[name], let section = batch.sections[name] else { continue }
            let settled = try AcceptedRows.settle(rows, table: table, seq: section.seq, batch: batch, db: db)
            report.sent += settled
            report.accepted += settled
            // The cloud took a section of every column this table declares.
            try SchemaRefusals.release(table: name, db: db)
        }
        var through: [String: String] = [:]
        for (name, result) in piece { through[name] = max(through[name] ?? result.id, result.id) }
        for (name, id) in through { try FlightSections.settle(batch: batch.id, table: name, through: id, db: db) }
        return report
    }

    /// Ends the batch's flight: its record, its sections and their tallies, and notes that
    /// the tables it asked down were pulled now.
    static func finish(_ batch: Flight, db: Database, context: CommitContext) throws {
        try FlightSections.forget(batch: batch.id, db: db)
        try db.execute(sql: "DELETE FROM dally_inflight WHERE batch = ?", arguments: [batch.id])
        try FlightTally.forget(batch: batch.id, db: db)
        try PullLog.record(batch.pulls, at: context.now, db: db)
    }

    private static func names(_ list: String) -> [String] { list.split(separator: " ").map(String.init) }

    /// The batch being answered.
    struct Flight: Sendable {
        let id: String
        /// When it was built: a row written again while it flew became dirty after this.
        let createdAt: Int64
        /// The tables it asked down.
        let pulls: [String]
        /// What it carried, by table.
        let sections: [String: FlightSections.Section]
    }

    private static func apply(
        _ result: BatchAnswer.RowResult, batch: Flight, table: TableSQL, db: Database, context: inout CommitContext,
        report: inout SyncReport
    ) throws {
        let name = table.schema.name
        guard let sentSeq = batch.sections[name]?.seq else { return }
        if let entry = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT first_dirty_at, bytes FROM dally_outbox WHERE tbl = ? AND row_id = ?"),
            arguments: [name, result.id])
        {
            var leaving = FlightTally()
            leaving.add(at: entry[0], bytes: entry[1])
            try FlightTally.take(leaving, table: name, batch: batch.id, db: db)
        }
        // Settled before its outcome is applied: an entry that outcome removes is no longer
        // this batch's (``Outbox/remove(table:rowID:previousSeq:mayBeInFlight:db:)`` leaves its tally as it is).
        try FlightSections.settle(batch: batch.id, table: name, through: result.id, db: db)
        report.sent += 1
        let current = try CloudRowWriter.current(result.id, table: table, db: db)
        // The section holds the highest sequence number the batch's tables had when it was
        // read: a write since took a higher one.
        let unchanged = current.map { $0.seq <= sentSeq } ?? false
        switch result {
        case .accepted(let id, let version):
            report.accepted += 1
            try settle(id, version: version, unchanged: unchanged, batch: batch, table: table, db: db)
        case .conflict(let id, let conflict):
            report.conflicts += 1
            try ConflictLog.record(conflict, id: id, table: table, now: context.now, db: db)
            switch conflict.winner {
            case .client:
                try settle(id, version: conflict.version, unchanged: unchanged, batch: batch, table: table, db: db)
            case .server where unchanged:
                let columns = table.schema.columns.indices.map { Optional($0) }
                try CloudRowWriter.write(
                    conflict.server, columns: columns, table: table, old: current, db: db, context: &context)
            case .server:
                try rebase(id, on: conflict.server.version, since: batch.createdAt, table: name, db: db)
            case .none:
                try rebase(id, on: conflict.server.version, since: nil, table: name, db: db, park: "conflict")
            }
        case .rejected(let id, let rejection):
            report.rejected += 1
            try ConflictLog.record(rejection, id: id, table: table, now: context.now, db: db)
            // A row written again since may already carry the fix; only the rejected state parks.
            if unchanged {
                try db.execute(
                    sql: "UPDATE dally_outbox SET parked = 'error' WHERE tbl = ? AND row_id = ?", arguments: [name, id])
            }
        }
    }

    /// The cloud holds the change at `version`: the row is clean, unless it changed again.
    private static func settle(
        _ id: String, version: Int64, unchanged: Bool, batch: Flight, table: TableSQL, db: Database
    ) throws {
        if unchanged {
            try db.execute(sql: "UPDATE \(table.sqlTable) SET version = ? WHERE id = ?", arguments: [version, id])
            try Outbox.remove(table: table.schema.name, rowID: id, db: db)
        } else {
            try rebase(id, on: version, since: batch.createdAt, table: table.schema.name, db: db)
        }
    }

    /// Keeps the row pending, now based on the cloud's `version`. A row written again while
    /// the batch flew is dirty since no earlier than the batch was built (`since`), which is
    /// where its deadline now counts from: the state it had before has just been delivered.
    private static func rebase(
        _ id: String, on version: Int64, since: Int64?, table: String, db: Database, park: String? = nil
    ) throws {
        try db.execute(
            sql: """
                UPDATE dally_outbox SET base_version = ?, parked = COALESCE(?, parked),
                    first_dirty_at = MAX(first_dirty_at, COALESCE(?, first_dirty_at))
                WHERE tbl = ? AND row_id = ?
                """,
            arguments: [version, park, since, table, id])
    }
}
