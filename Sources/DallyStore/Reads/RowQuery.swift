import DallyCore
import GRDB

/// A query for rows of one table, paged by local sequence.
public struct RowQuery: Sendable {
    public var table: String
    /// Only rows whose latest change came after this local sequence number.
    public var since: Int64
    public var limit: Int
    /// Equality filters, ANDed: (column name, value). Names must be columns of the table.
    public var filters: [(column: String, value: Value)]
    public var includeDeleted: Bool
    /// More conditions ANDed with ``filters``: the reading token's scope, with `IN` lists.
    public var scope: RowFilter = .all

    public init(
        table: String, since: Int64 = 0, limit: Int, filters: [(column: String, value: Value)] = [],
        includeDeleted: Bool = false
    ) {
        self.table = table
        self.since = since
        self.limit = limit
        self.filters = filters
        self.includeDeleted = includeDeleted
    }
}
