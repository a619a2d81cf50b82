/// A table as declared in the configuration: its name, ordered columns and policies.
///
/// The column order is the declaration order; it is the order of positional rows in batches
/// and of the replica's SQL columns.
public struct TableSchema: Sendable, Hashable {
    public let name: String
    public let columns: [Column]
    public let conflict: ConflictPolicy
    public let policy: SyncPolicy
    /// Tombstone compaction, retention and the outbox bound.
    public let lifecycle: TableLifecycle
    /// On a gateway: the rows of the table it holds (nil: all of them).
    public let scope: RowScope?
    /// On a gateway: what a local write outside ``scope`` gets.
    public let scopeWrites: ScopeWrites
    /// In the cloud: the columns gateways may scope on; each gets an index and a move log.
    public let scopeColumns: [String]
    private let indexByName: [String: Int]

    public init(
        name: String, columns: [Column], conflict: ConflictPolicy, policy: SyncPolicy,
        lifecycle: TableLifecycle = TableLifecycle(), scope: RowScope? = nil, scopeWrites: ScopeWrites = .accept,
        scopeColumns: [String] = []
    ) {
        self.name = name
        self.lifecycle = lifecycle
        self.columns = columns
        self.conflict = conflict
        self.policy = policy
        self.scope = scope
        self.scopeWrites = scopeWrites
        self.scopeColumns = scopeColumns
        var index: [String: Int] = [:]
        for (i, column) in columns.enumerated() { index[column.name] = i }
        self.indexByName = index
    }

    /// The position of the column named `name`, or nil when the table has no such column.
    public func columnIndex(_ name: String) -> Int? { indexByName[name] }

    /// The column named `name`, or nil when the table has no such column.
    public func column(named name: String) -> Column? {
        indexByName[name].map { columns[$0] }
    }

    public static func == (lhs: TableSchema, rhs: TableSchema) -> Bool {
        lhs.name == rhs.name && lhs.columns == rhs.columns && lhs.conflict == rhs.conflict && lhs.policy == rhs.policy
            && lhs.lifecycle == rhs.lifecycle
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(columns)
    }
}
