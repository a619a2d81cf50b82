/// The rows a local reader asks for: equality conditions ANDed, each column's value one of a
/// list. It is the request's `where=col:value` clauses joined with the reading token's scope.
///
/// Unlike a ``TypedScope``, a condition may ask for null (`where=col:null`), and a tombstone
/// (all values null) matches only such a condition.
///
/// For example, `where=status:open` read by a token scoped to `user_id = "u7"`:
///
/// ```swift
/// var filter = RowFilter(equalities: [("status", .text("open"))])
/// filter.and(tokenScope)   // user_id IN ("u7")
/// filter.matches { ["status": Value.text("open"), "user_id": .text("u7")][$0] } // true
/// ```
public struct RowFilter: Sendable, Equatable {
    public struct Condition: Sendable, Equatable {
        public var column: String
        /// At least one value; `.null` matches a null column.
        public var values: [Value]

        public init(column: String, values: [Value]) {
            self.column = column
            self.values = values
        }
    }

    public private(set) var conditions: [Condition]

    /// The filter that every row passes.
    public static let all = RowFilter(equalities: [])

    public init(equalities: [(column: String, value: Value)]) {
        conditions = equalities.map { Condition(column: $0.column, values: [$0.value]) }
    }

    /// Whether the filter lets every row through.
    public var isEmpty: Bool { conditions.isEmpty }

    /// The columns the filter tests, each once, in name order.
    public var columns: [String] { Array(Set(conditions.map(\.column))).sorted() }

    /// Adds `scope`'s conditions: a row must pass both.
    public mutating func and(_ scope: TypedScope?) {
        guard let scope else { return }
        conditions += scope.conditions.map { Condition(column: $0.column, values: $0.values) }
    }

    /// Whether a row with these column values passes; `value(column)` is nil for a column the
    /// row lacks, read as null.
    public func matches(_ value: (String) -> Value?) -> Bool {
        conditions.allSatisfy { condition in condition.values.contains(value(condition.column) ?? .null) }
    }

    /// A stable text naming the filter, for cache keys: two equal filters give the same key.
    public var key: String {
        conditions.map { "\($0.column)=\($0.values.map { "\($0)" }.joined(separator: ","))" }.sorted()
            .joined(separator: "&")
    }
}
