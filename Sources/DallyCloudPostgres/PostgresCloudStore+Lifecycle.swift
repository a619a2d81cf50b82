import DallySync
import PostgresNIO

extension PostgresCloudStore {
    /// Tombstones purged per transaction, so that batches never wait long behind compaction.
    static let purgePieceRows: Int64 = 5_000

    public func recordCursors(_ cursors: [GatewayCursor]) async throws {
        guard !cursors.isEmpty else { return }
        let logger = access.logger
        try await access.transaction { connection in
            for cursor in cursors {
                try await connection.query(
                    """
                    INSERT INTO cloud_gateway_cursors (gateway, tbl, version, seen_at) \
                    VALUES (\(cursor.gateway), \(cursor.table), \(cursor.version), \(cursor.seenAt)) \
                    ON CONFLICT (gateway, tbl) DO UPDATE SET version = excluded.version, seen_at = excluded.seen_at \
                    WHERE excluded.seen_at >= cloud_gateway_cursors.seen_at
                    """, logger: logger)
            }
        }
    }

    public func gatewayCursors() async throws -> [GatewayCursor] {
        let logger = access.logger
        return try await access.withConnection { connection in
            var cursors: [GatewayCursor] = []
            let rows = try await connection.query(
                "SELECT gateway, tbl, version, seen_at FROM cloud_gateway_cursors ORDER BY gateway, tbl", logger: logger)
            for try await (gateway, table, version, seenAt) in rows.decode((String, String, Int64, Int64).self) {
                cursors.append(GatewayCursor(gateway: gateway, table: table, version: version, seenAt: seenAt))
            }
            return cursors
        }
    }

    public func recordDeclarations(_ told: ToldDocument) async throws {
        let document = ByteBuffer(bytes: told.document)
        let logger = access.logger
        try await access.withConnection { connection in
            try await connection.query(
                """
                INSERT INTO cloud_gateway_declarations (gateway, document, told_at) \
                VALUES (\(told.gateway), \(document), \(told.toldAt)) \
                ON CONFLICT (gateway) DO UPDATE SET document = excluded.document, told_at = excluded.told_at \
                WHERE excluded.told_at >= cloud_gateway_declarations.told_at
                """, logger: logger)
        }
    }

    public func toldDeclarations() async throws -> [ToldDocument] {
        let logger = access.logger
        return try await access.withConnection { connection in
            var told: [ToldDocument] = []
            let rows = try await connection.query(
                "SELECT gateway, document, told_at FROM cloud_gateway_declarations ORDER BY gateway", logger: logger)
            for try await (gateway, document, toldAt) in rows.decode((String, ByteBuffer, Int64).self) {
                told.append(ToldDocument(gateway: gateway, document: Array(document.readableBytesView), toldAt: toldAt))
            }
            return told
        }
    }

    /// Each piece runs in a transaction that holds the table's counter row, as a batch does:
    /// batches and readers of other nodes see the deletes and the raised horizon together.
    public func purgeTombstones(table: String, upTo version: Int64, before cutoff: Int64) async throws -> Int64 {
        guard let sql = tables[table] else { return 0 }
        let logger = access.logger
        var purged: Int64 = 0
        while true {
            let removed = try await access.transaction { connection -> Int64 in
                try await connection.query("SELECT 1 FROM cloud_tables WHERE tbl = \(table) FOR UPDATE", logger: logger)
                var binds = PostgresBindings()
                binds.append(version)
                binds.append(cutoff)
                binds.append(Self.purgePieceRows)
                let rows = try await connection.query(
                    PostgresQuery(
                        unsafeSQL: """
                            SELECT MAX(version) FROM (SELECT version FROM \(sql.sqlTable)
                                WHERE deleted AND version <= $1 AND updated_at < $2 ORDER BY version LIMIT $3) AS piece
                            """, binds: binds), logger: logger)
                var pieceEnd: Int64?
                for try await end in rows.decode(Int64?.self) { pieceEnd = end }
                guard let pieceEnd else { return 0 }
                var deleteBinds = PostgresBindings()
                deleteBinds.append(pieceEnd)
                deleteBinds.append(cutoff)
                let deleted = try await connection.query(
                    PostgresQuery(
                        unsafeSQL: "DELETE FROM \(sql.sqlTable) WHERE deleted AND version <= $1 AND updated_at < $2 RETURNING 1",
                        binds: deleteBinds), logger: logger)
                var count: Int64 = 0
                for try await _ in deleted { count += 1 }
                try await connection.query(
                    "UPDATE cloud_tables SET horizon = GREATEST(horizon, \(pieceEnd)) WHERE tbl = \(table)", logger: logger)
                return count
            }
            purged += removed
            if removed < Self.purgePieceRows { return purged }
        }
    }
}
