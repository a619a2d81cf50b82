import DallyCore

/// The checks a write by a client token pinned to a scope passes (CONFIG.md, `[clients.scope]`):
/// the token may touch only rows in its scope, and learns nothing about the others.
enum ClientScopeCheck {
    /// The live row `old` must be in `scope`.
    ///
    /// - Throws: ``DallyError`` `not_found`, worded as for a row that does not exist, for a PATCH
    ///   or DELETE; `out_of_scope` for a PUT (the id is taken; the answer says no more).
    static func requireHeld(_ old: StoredRow, scope: TypedScope, kind: RowWrite.Kind, schema: TableSchema)
        throws(DallyError)
    {
        guard !scope.matches({ schema.columnIndex($0).map { old.values[$0] } }) else { return }
        switch kind {
        case .patch:
            throw DallyError(.notFound, "row '\(old.id)' does not exist in '\(schema.name)'; use PUT to create it")
        case .delete:
            throw DallyError(.notFound, "row '\(old.id)' does not exist in '\(schema.name)'")
        case .put:
            throw DallyError(
                .outOfScope,
                "row id '\(old.id)' cannot be written with this token: it is not in the token's scope; use another id",
                field: "id")
        }
    }

    /// The row as written must be in `scope`.
    ///
    /// - Throws: ``DallyError`` `out_of_scope` naming the scope's columns.
    static func requireWritten(_ values: [Value], scope: TypedScope, id: String, schema: TableSchema) throws(DallyError) {
        guard !scope.matches({ schema.columnIndex($0).map { values[$0] } }) else { return }
        let columns = scope.conditions.map(\.column).joined(separator: ", ")
        throw DallyError(
            .outOfScope,
            "row '\(id)' would be outside this token's scope on table '\(schema.name)' (\(columns)); set \(columns) to a value of the scope",
            field: scope.conditions.count == 1 ? scope.conditions.first?.column : nil)
    }
}
