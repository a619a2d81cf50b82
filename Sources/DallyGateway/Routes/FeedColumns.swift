import DallyConfig
import DallyCore

/// The columns a local changes feed may filter on (`where=` on `/changes`), per table: the
/// table's `scope_columns`, its gateway scope's columns, and every column a client token's
/// scope names on it. Only these have a move log (``TableSchema/scopeColumns`` in the replica),
/// which is what lets a filtered feed say that a row *left* the filter; a filter on any other
/// column could not, so it is refused.
enum FeedColumns {
    /// The configured tables with ``TableSchema/scopeColumns`` widened to the feed columns.
    static func schemas(_ config: GatewayConfig) -> [TableSchema] {
        config.tables.map { table in
            var columns = table.scopeColumns
            let scoped = (table.scope?.columns ?? []) + config.clients.flatMap { $0.scopes[table.name]?.columns ?? [] }
            for column in scoped where !columns.contains(column) { columns.append(column) }
            guard columns != table.scopeColumns else { return table }
            return TableSchema(
                name: table.name, columns: table.columns, conflict: table.conflict, policy: table.policy,
                scope: table.scope, scopeWrites: table.scopeWrites, scopeColumns: columns)
        }
    }
}
