import DallyCore
import DallyCloudStore
import DallyStore
import DallySync
import Foundation
import GRDB

/// The two parts of `dally-bench apply` that need no server: the cloud store alone, and raw
/// SQLite inserts of the same rows (the limit).
enum ApplyStore {
    /// `SQLiteCloudStore.apply` on `batches`, one after the other, in a fresh directory.
    static func store(_ batches: [BatchRequest], setup: ApplySetup) async throws -> ApplyResult {
        let store = try SQLiteCloudStore.open(
            directory: setup.root + "/store", tables: [setup.schema], synchronousFull: setup.synchronousFull)
        // The route fingerprints the body; done beforehand, it stays out of the figure.
        let fingerprints = batches.map { Fingerprint.of($0.encode()) }
        var samples = Samples()
        var tally = ApplyTally()
        let clock = ContinuousClock()
        do {
            for (batch, fingerprint) in zip(batches, fingerprints) {
                let now = Int64(Date().timeIntervalSince1970 * 1000)
                let start = clock.now
                let answer = try await store.apply(batch, fingerprint: fingerprint, pageRows: 1000, now: now)
                samples.add(clock.now - start)
                tally.add(answer)
            }
        } catch {
            try? store.close()
            throw error
        }
        try store.close()
        return ApplyResult(
            name: "store", label: "store (SQLiteCloudStore.apply)", rows: batches.reduce(0) { $0 + $1.rowCount },
            seconds: samples.total / 1000, perBatch: samples, notes: tally.text)
    }

    /// The same rows inserted with plain GRDB into a table shaped like the cloud's (`WITHOUT
    /// ROWID`, primary key `id`, unique index on `version`), one transaction per batch, WAL and
    /// the same `synchronous`: no version lookups, no conflict rule, no answer to record.
    /// Updates are plain `UPDATE … WHERE id = ?`.
    static func rawSQLite(_ batches: [BatchRequest], setup: ApplySetup) async throws -> ApplyResult {
        let directory = setup.root + "/sqlite"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var configuration = Configuration()
        let synchronous = setup.synchronousFull ? "FULL" : "NORMAL"
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = \(synchronous)") }
        let pool = try DatabasePool(path: directory + "/raw.sqlite", configuration: configuration)
        let columns = setup.schema.columns.map { "\"c_\($0.name)\"" }
        let create = """
            CREATE TABLE t_orders (
                id TEXT NOT NULL PRIMARY KEY, version INTEGER NOT NULL, updated_at INTEGER NOT NULL,
                deleted INTEGER NOT NULL DEFAULT 0, origin TEXT NOT NULL, batch TEXT NOT NULL\
            \(columns.map { ", \($0)" }.joined())) WITHOUT ROWID;
            CREATE UNIQUE INDEX t_orders_version ON t_orders(version);
            """
        let names = (["id", "version", "updated_at", "deleted", "origin", "batch"] + columns).joined(separator: ", ")
        let placeholders = Array(repeating: "?", count: 6 + columns.count).joined(separator: ", ")
        let insert = "INSERT INTO t_orders (\(names)) VALUES (\(placeholders))"
        let update =
            "UPDATE t_orders SET version = ?, updated_at = ?, origin = ?, batch = ?"
            + columns.map { ", \($0) = ?" }.joined() + " WHERE id = ?"

        var samples = Samples()
        var existing: Set<String> = []
        var version: Int64 = 0
        let clock = ContinuousClock()
        do {
            try await pool.write { db in try db.execute(sql: create) }
            for batch in batches {
                // Values are converted before the clock starts: the figure is SQLite's alone.
                let rows = try statementRows(batch, schema: setup.schema, existing: &existing, version: &version)
                let start = clock.now
                try await pool.write { db in
                    let inserting = try db.cachedStatement(sql: insert)
                    let updating = try db.cachedStatement(sql: update)
                    for row in rows {
                        try (row.update ? updating : inserting).execute(values: row.arguments)
                    }
                }
                samples.add(clock.now - start)
            }
        } catch {
            try? pool.close()
            throw error
        }
        try pool.close()
        return ApplyResult(
            name: "sqlite", label: "sqlite (raw GRDB, tx/batch)", rows: batches.reduce(0) { $0 + $1.rowCount },
            seconds: samples.total / 1000, perBatch: samples, notes: "the limit: same rows, plain INSERT/UPDATE")
    }

    private struct StatementRow: Sendable {
        var update: Bool
        var arguments: [DatabaseValue]
    }

    private static func statementRows(
        _ batch: BatchRequest, schema: TableSchema, existing: inout Set<String>, version: inout Int64
    ) throws -> [StatementRow] {
        let origin = "\(batch.gateway)/\(batch.replica)"  // what the cloud records as writer
        var rows: [StatementRow] = []
        for section in batch.sections {
            rows.reserveCapacity(section.changes.count)
            for change in section.changes {
                version += 1
                var values: [DatabaseValue] = []
                for (json, column) in zip(change.values, schema.columns) {
                    values.append(RowDecoding.databaseValue(try Value(wire: json, for: column)))  // as the cloud stores it
                }
                if existing.insert(change.id).inserted {
                    let head: [DatabaseValue] = [
                        change.id.databaseValue, version.databaseValue, change.updatedAt.databaseValue,
                        0.databaseValue, origin.databaseValue, batch.batchID.databaseValue,
                    ]
                    rows.append(StatementRow(update: false, arguments: head + values))
                } else {
                    let head: [DatabaseValue] = [
                        version.databaseValue, change.updatedAt.databaseValue, origin.databaseValue,
                        batch.batchID.databaseValue,
                    ]
                    rows.append(StatementRow(update: true, arguments: head + values + [change.id.databaseValue]))
                }
            }
        }
        return rows
    }
}
