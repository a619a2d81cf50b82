import DallyCore

/// The columns a section writes, found in its table's schema: what every store works out
/// before applying a section's changes.
public struct SectionLayout: Sendable {
    /// The schema positions of the section's columns, in the section's order.
    public let positions: [Int]
    public let columns: [Column]
    /// Whether the changes' objects must be held complete first: an `atomic_sync` table
    /// whose section writes an OBJECT column.
    public let checksObjects: Bool
}

extension BatchRequest.Section {
    /// The section's layout in `schema`, or the error that rejects all of its changes (an
    /// unknown column).
    public func layout(in schema: TableSchema) -> Result<SectionLayout, DallyError> {
        var positions: [Int] = []
        positions.reserveCapacity(columns.count)
        for name in columns {
            guard let position = schema.columnIndex(name) else {
                return .failure(
                    DallyError(.unknownColumn, "the cloud's table '\(table)' has no column '\(name)'", field: name))
            }
            positions.append(position)
        }
        let columns = positions.map { schema.columns[$0] }
        return .success(
            SectionLayout(
                positions: positions, columns: columns,
                checksObjects: schema.policy.atomicSync && columns.contains { $0.type == .object }))
    }

    /// Every change of the section rejected with `error`.
    public func rejectAll(_ error: DallyError) -> [BatchAnswer.RowResult] {
        let rejection = BatchAnswer.RowRejection(error)
        return changes.map { .rejected(id: $0.id, rejection) }
    }

    /// The error for a section naming a table the cloud lacks.
    public var unknownTable: DallyError { DallyError(.unknownTable, "the cloud has no table '\(table)'") }
}
