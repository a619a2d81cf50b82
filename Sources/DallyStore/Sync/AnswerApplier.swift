import DallyCore
import DallySync
import GRDB

/// Applies the cloud's answer to the batch in flight, in one transaction with its downstream
/// pages, and ends the batch's flight.
///
/// A row changed locally again after the batch was built keeps its outbox entry: the new
/// pending state goes up next, based on the version the cloud just assigned.
enum AnswerApplier {
    static func apply(_ answer: BatchAnswer, tables: [String: TableSQL], db: Database, context: inout CommitContext)
        throws -> SyncReport
    {
        guard let flight = try Row.fetchOne(
            db, sql: "SELECT created_at, pulls FROM dally_inflight WHERE batch = ?", arguments: [answer.batchID])
        else {
            throw StoreError("the cloud answered batch '\(answer.batchID)', which is not in flight")
        }
        let batch = Flight(id: answer.batchID, createdAt: flight[0])
        var report = SyncReport()
        report.replayed = answer.replayed
        for section in answer.results {
            guard let table = tables[section.table] else { continue }
            for result in section.rows {
                report.sent += 1
                try apply(result, batch: batch, table: table, db: db, context: &context, report: &report)
            }
        }
        try db.execute(sql: "DELETE FROM dally_inflight_rows WHERE batch = ?", arguments: [batch.id])
        try db.execute(sql: "DELETE FROM dally_inflight WHERE batch = ?", arguments: [batch.id])
        if let pulls: String = flight[1] {
            try PullLog.record(pulls.split(separator: " ").map(String.init), at: context.now, db: db)
        }
        for page in answer.changes {
            report.received += try DownstreamApplier.apply(page, tables: tables, db: db, context: &context)
            report.more = report.more || page.more
        }
        return report
    }

    /// The batch being answered.
    private struct Flight {
        let id: String
        /// When it was built: a row written again while it flew became dirty after this.
        let createdAt: Int64
    }

    private static func apply(
        _ result: BatchAnswer.RowResult, batch: Flight, table: TableSQL, db: Database, context: inout CommitContext,
        report: inout SyncReport
    ) throws {
        let name = table.schema.name
        let sentSeq = try Int64.fetchOne(
            db, sql: "SELECT seq FROM dally_inflight_rows WHERE batch = ? AND tbl = ? AND row_id = ?",
            arguments: [batch.id, name, result.id])
        let current = try CloudRowWriter.current(result.id, table: table, db: db)
        let unchanged = sentSeq != nil && current?.seq == sentSeq
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
            try db.execute(sql: "DELETE FROM dally_outbox WHERE tbl = ? AND row_id = ?", arguments: [table.schema.name, id])
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

extension ReplicaStore {
    /// Applies the cloud's answer to a batch in flight and its downstream pages, in one
    /// transaction, and records the tables it pulled; local long-polls wake for every row it
    /// changed.
    ///
    /// - Throws: ``StoreError`` when the answer is for a batch that is not in flight.
    public func applyAnswer(_ answer: BatchAnswer) async throws -> SyncReport {
        let tables = self.tables
        return try await groupCommit.perform { db, context in
            try AnswerApplier.apply(answer, tables: tables, db: db, context: &context)
        }
    }
}
