import DallyCore
import DallySync
import Logging
import PostgresNIO

extension PostgresCloudStore {
    public func apply(_ batch: BatchRequest, fingerprint: UInt64, pageRows: Int, now: Int64) async throws -> BatchAnswer {
        let tables = self.tables
        let logger = access.logger
        let scopes = try batch.scopes.validated({ tables[$0]?.schema }, field: "scopes")
        let prepared = PostgresBatchApplier(batch: batch, tables: tables, logger: logger)
        let (answer, commits) = try await access.transaction { connection -> (BatchAnswer, [RecentCommits.Commit]) in
            let signed = Int64(bitPattern: fingerprint)
            // A batch with no changes is a pull: nothing to apply, so nothing to remember,
            // unless it is the retry of one that was.
            if batch.sections.isEmpty {
                if let stored = try await Self.storedAnswer(batch, on: connection, logger: logger) {
                    return (try await Self.replay(batch, scopes, stored, signed, tables, pageRows, connection, logger), [])
                }
                let versions = try await PostgresPageReader.versions(Array(tables.keys), on: connection, logger: logger)
                let changes = try await Self.downstream(batch, scopes, tables, versions, pageRows, connection, logger)
                return (BatchAnswer(batchID: batch.batchID, replayed: false, results: [], changes: changes), [])
            }
            // Claim the batch id. The same id sent to another node at the same time waits here
            // for this transaction and then finds the row, committed with its results.
            let claimed = try await connection.query(
                """
                INSERT INTO cloud_batches (gateway, batch, received_at, fingerprint) \
                VALUES (\(batch.gateway), \(batch.batchID), \(now), \(signed)) ON CONFLICT DO NOTHING RETURNING 1
                """, logger: logger)
            var isNew = false
            for try await _ in claimed { isNew = true }
            guard isNew else {
                guard let stored = try await Self.storedAnswer(batch, on: connection, logger: logger) else {
                    throw DallyError(
                        .storage, "batch '\(batch.batchID)' was being forgotten while it was resent; resend it")
                }
                return (try await Self.replay(batch, scopes, stored, signed, tables, pageRows, connection, logger), [])
            }

            // Rule on the changes against the rows as they are now, then lock the counters of
            // the tables this batch writes (in name order) for the rest of the transaction:
            // the applier reads again whatever moved in between.
            var applier = prepared
            let written = applier.writtenTables
            let seen = try await PostgresBatchApplier.counters(written, locking: false, on: connection, logger: logger)
            try await applier.rule(counters: seen, on: connection)
            let locked = try await PostgresBatchApplier.counters(written, locking: true, on: connection, logger: logger)
            let results = try await applier.apply(locked: locked, on: connection)
            let touched = applier.versions.filter { locked[$0.key]?.version != $0.value }
            for (table, version) in touched.sorted(by: { $0.key < $1.key }) {
                try await connection.query(
                    "UPDATE cloud_tables SET version = \(version) WHERE tbl = \(table)", logger: logger)
            }
            let encoded = ByteBuffer(bytes: BatchAnswer.encodeResults(results))
            try await connection.query(
                "UPDATE cloud_batches SET results = \(encoded) WHERE gateway = \(batch.gateway) AND batch = \(batch.batchID)",
                logger: logger)
            let commits = touched.map { table, version in
                RecentCommits.Commit(table: table, after: locked[table]?.version ?? 0, upTo: version, origin: batch.origin)
            }
            if !commits.isEmpty {
                // Delivered to every listening node when, and only if, this transaction commits.
                let payload = CommitListener.payload(commits)
                try await connection.query("SELECT pg_notify(\(Self.channel), \(payload))", logger: logger)
            }
            var versions = try await PostgresPageReader.versions(
                Array(tables.keys.filter { locked[$0] == nil }), on: connection, logger: logger)
            versions.merge(applier.versions) { _, own in own }
            let changes = try await Self.downstream(batch, scopes, tables, versions, pageRows, connection, logger)
            return (BatchAnswer(batchID: batch.batchID, replayed: false, results: results, changes: changes), commits)
        }
        if !commits.isEmpty { heard(commits) }
        return answer
    }

    /// The fingerprint and results stored for `batch`'s id, once its transaction committed.
    private static func storedAnswer(_ batch: BatchRequest, on connection: PostgresConnection, logger: Logger)
        async throws -> (fingerprint: Int64, results: [UInt8])?
    {
        let rows = try await connection.query(
            """
            SELECT fingerprint, results FROM cloud_batches \
            WHERE gateway = \(batch.gateway) AND batch = \(batch.batchID) AND results IS NOT NULL
            """, logger: logger)
        for try await row in rows {
            let cells = row.makeRandomAccess()
            return (try cells[0].decode(Int64.self), try PostgresValues.bytes(cells[1]))
        }
        return nil
    }

    /// The answer to a batch applied before: its stored results and a fresh downstream page.
    private static func replay(
        _ batch: BatchRequest, _ scopes: [String: TypedScope], _ stored: (fingerprint: Int64, results: [UInt8]),
        _ signed: Int64,
        _ tables: [String: PostgresTableSQL], _ pageRows: Int, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> BatchAnswer {
        guard stored.fingerprint == signed else {
            throw DallyError(
                .batchReused,
                "gateway '\(batch.gateway)' already sent a different batch with id '\(batch.batchID)'; a retry must resend the same body, a new batch needs a new id")
        }
        let results = try BatchAnswer.decodeResults(try JSONParser.parse(stored.results), outline: batch.outline)
        let versions = try await PostgresPageReader.versions(Array(tables.keys), on: connection, logger: logger)
        let changes = try await downstream(batch, scopes, tables, versions, pageRows, connection, logger)
        return BatchAnswer(batchID: batch.batchID, replayed: true, results: results, changes: changes)
    }

    /// One bounded page across the tables the gateway named, in the order it named them.
    private static func downstream(
        _ batch: BatchRequest, _ scopes: [String: TypedScope], _ tables: [String: PostgresTableSQL],
        _ versions: [String: Int64], _ pageRows: Int,
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> [ChangePage] {
        var budget = pageRows
        var pages: [ChangePage] = []
        let asked = batch.since.entries.filter { tables[$0.table] != nil && $0.version != versions[$0.table] ?? 0 }
        guard !asked.isEmpty else { return [] }
        let horizons = try await PostgresPageReader.horizons(asked.map(\.table), on: connection, logger: logger)
        for (name, since) in asked {
            guard let table = tables[name] else { continue }
            let version = versions[name] ?? 0
            // A cursor ahead of the version is a restored cloud's: answered with a resync page.
            let page = try await PostgresPageReader.page(
                table, asked: since, resyncing: batch.resyncing.contains(name), regressed: batch.regressed.contains(name),
                horizon: horizons[name] ?? 0, limit: budget, excludingReplica: batch.origin, scope: scopes[name],
                tableVersion: version, on: connection, logger: logger)
            budget -= page.rows.count
            pages.append(page)
        }
        return pages
    }
}
