/// What a store must do to bring its row tables in line with the configured tables, given the
/// columns it recorded when last opened: the rule every store follows, so that the SQLite and
/// the PostgreSQL store accept and refuse the same configuration changes.
///
/// A column or table new in the configuration is added; a column whose type changed, a column
/// that disappeared or a table that disappeared is refused, because going on would silently
/// drop or reinterpret data a client was told is saved.
public enum ColumnPlan {
    /// One step of the plan.
    public enum Step: Sendable {
        /// Create the table and record all its columns.
        case create(TableSchema)
        /// Add `columns` to the table and record them from position `from` on.
        case add(TableSchema, columns: [Column], from: Int)
    }

    /// A configuration change the plan refuses; `message` says what to do instead.
    public struct Refusal: Error, Sendable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// The steps, in the order of `configured`.
    ///
    /// - Parameter stored: each table's recorded columns (name, type name) in position order.
    /// - Throws: ``Refusal`` for a type change, a dropped column or a dropped table.
    public static func steps(stored: [String: [(name: String, type: String)]], configured: [TableSchema]) throws(Refusal)
        -> [Step]
    {
        let names = Set(configured.map(\.name))
        for name in stored.keys.sorted() where !names.contains(name) {
            throw Refusal(
                message: "table '\(name)' holds data in the database but is no longer in the configuration; "
                    + "declare it again (dropping a table is not supported), or start with an empty data directory")
        }
        var steps: [Step] = []
        for schema in configured {
            guard let existing = stored[schema.name] else {
                steps.append(.create(schema))
                continue
            }
            for old in existing {
                guard let now = schema.column(named: old.name) else {
                    throw Refusal(
                        message: "column '\(schema.name).\(old.name)' (\(old.type)) is in the database but not in the "
                            + "configuration; dropping a column is not supported: declare it again")
                }
                guard now.type.rawValue == old.type else {
                    throw Refusal(
                        message: "column '\(schema.name).\(old.name)' is \(old.type) in the database but "
                            + "\(now.type.rawValue) in the configuration; changing a column's type is not supported: "
                            + "add a new column instead")
                }
            }
            let added = schema.columns.filter { column in !existing.contains { $0.name == column.name } }
            if !added.isEmpty { steps.append(.add(schema, columns: added, from: existing.count)) }
        }
        return steps
    }
}
