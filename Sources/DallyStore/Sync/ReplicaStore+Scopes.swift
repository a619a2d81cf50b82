import DallyCore
import DallySync
import GRDB

extension ReplicaStore {
    /// Brings the replica to the scopes in the configuration, once at start: for each table
    /// whose scope differs from the one recorded at the last start, drops the clean rows now
    /// outside it (``ScopeExit``: local feeds see them go, nothing goes upstream; dirty rows
    /// keep their changes, which go up as usual) and pulls the table again from version 0 with
    /// the new scope, so what entered arrives (rows held already at their version are skipped).
    ///
    /// - Returns: the tables whose scope changed, in name order.
    @discardableResult
    public func reconcileScopes() async throws -> [String] {
        let tables = self.tables.values.filter { !$0.schema.policy.localOnly }.sorted { $0.schema.name < $1.schema.name }
        return try await groupCommit.perform(lane: .sync(.applyPage)) { db, context in
            var changed: [String] = []
            for table in tables {
                let schema = table.schema
                let key = "scope:\(schema.name)"
                let current = schema.scope.map { String(decoding: TableScopes([schema.name: $0]).encode(), as: UTF8.self) } ?? ""
                let recorded = try DeclarationRecord.recorded(key, db: db) ?? ""
                guard recorded != current else { continue }
                if let scope = schema.scope {
                    let typed = try scope.validated(against: schema)
                    let rows = try Row.fetchAll(
                        db, sql: "SELECT \(table.selectList) FROM \(table.sqlTable) WHERE deleted = 0 AND version IS NOT NULL")
                    for row in rows {
                        let stored = RowDecoding.storedRow(row, schema: schema)
                        let inScope = typed.matches { name in schema.columnIndex(name).map { stored.values[$0] } }
                        guard !inScope, ScopeExit.canLeave(stored) else { continue }
                        try ScopeExit.leave(stored, updatedAt: context.now, table: table, db: db, context: &context)
                    }
                }
                // A page of a batch sent before, with the old scope, is then not applied.
                try DeclarationRecord.pullFromScratch(schema.name, db: db)
                try DeclarationRecord.record(key, current, db: db)
                changed.append(schema.name)
            }
            return changed
        }
    }
}
