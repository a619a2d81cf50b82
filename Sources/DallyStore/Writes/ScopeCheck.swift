import DallyCore

/// The check a write to a scoped table passes when writes outside the scope are refused
/// (`scope_writes = "reject"`): the row as it is, when live, and the row as written, unless
/// deleted, must both be in the scope.
enum ScopeCheck {
    /// - Throws: ``DallyError`` `out_of_scope` naming the scope's columns; nothing was written.
    static func require(_ scope: TypedScope, old: StoredRow?, new: [Value]?, id: String, schema: TableSchema)
        throws(DallyError)
    {
        let oldIn = old.map { row in scope.matches { schema.columnIndex($0).map { row.values[$0] } } } ?? true
        let newIn = new.map { values in scope.matches { schema.columnIndex($0).map { values[$0] } } } ?? true
        guard oldIn && newIn else {
            let columns = scope.conditions.map(\.column).joined(separator: ", ")
            throw DallyError(
                .outOfScope,
                "row '\(id)' would be outside the scope of table '\(schema.name)' (\(columns)); this gateway refuses writes outside its scope (scope_writes = \"reject\")",
                field: scope.conditions.count == 1 ? scope.conditions.first?.column : nil)
        }
    }
}
