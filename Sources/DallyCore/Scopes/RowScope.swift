/// The rows of one table that a gateway (or a client token) holds: equality on one or more
/// columns, each with one value or an `IN` list, all conditions ANDed.
///
/// TinySync calls this the sync scope. A table with no scope holds every row.
///
/// For example, the gateway config's `scope = { store_id = "S12", region = ["north", "east"] }`
/// is:
///
/// ```swift
/// let scope = RowScope([
///     .init(column: "store_id", values: [.string("S12")]),
///     .init(column: "region", values: [.string("north"), .string("east")]),
/// ])
/// scope.matches { ["store_id": Value.text("S12"), "region": .text("east")][$0] } // true
/// ```
///
/// Values stay in their JSON form until they meet a column: ``validated(against:)`` turns each
/// into the column's ``Value`` type once, and refuses what cannot be compared.
public struct RowScope: Sendable, Equatable {
    /// One column's condition: the column's value is one of `values`.
    public struct Condition: Sendable, Equatable {
        public var column: String
        /// At least one value; a row whose column is null matches none.
        public var values: [JSONValue]

        public init(column: String, values: [JSONValue]) {
            self.column = column
            self.values = values
        }
    }

    /// In column-name order, so that two equal scopes compare and encode alike.
    public private(set) var conditions: [Condition]

    public init(_ conditions: [Condition]) {
        self.conditions = conditions.sorted { $0.column < $1.column }
    }

    /// The columns the scope constrains, in name order.
    public var columns: [String] { conditions.map(\.column) }

    /// The column types a scope may compare: JSON, OBJECT and BLOB values have no equality that
    /// a client and both stores agree on.
    public static func isComparable(_ type: ColumnType) -> Bool {
        switch type {
        case .text, .integer, .real, .boolean: true
        case .blob, .json, .object: false
        }
    }

    /// The most values a scope lists over all its columns. The stores bind each value as a
    /// statement parameter, of which PostgreSQL takes 65,535 and SQLite 32,766 at most: a scope
    /// of 100,000 values failed every page of the cloud on PostgreSQL (`500 storage`).
    public static let maxValues = 1_000

    /// This scope with every value converted to its column's type, in the same order.
    ///
    /// - Throws: ``DallyError`` `unknown_column` for a column the table lacks, `wrong_type` for
    ///   a column that cannot be compared or a value that does not fit it, `bad_request` for an
    ///   empty list, a null or more than ``maxValues`` values; `field` is `prefix` + the column.
    public func validated(against schema: TableSchema, field prefix: String = "") throws(DallyError) -> TypedScope {
        var typed: [TypedScope.Condition] = []
        var listed = 0
        for condition in conditions {
            let field = prefix + condition.column
            listed += condition.values.count
            guard listed <= Self.maxValues else {
                throw DallyError(
                    .badRequest,
                    "the scope lists more than \(Self.maxValues) values; scope on a coarser column (a region, not its stores)",
                    field: field)
            }
            guard let column = schema.column(named: condition.column) else {
                throw DallyError(
                    .unknownColumn, "table '\(schema.name)' has no column '\(condition.column)' to scope on",
                    field: field)
            }
            guard Self.isComparable(column.type) else {
                throw DallyError(
                    .wrongType,
                    "column '\(column.name)' is \(column.type.rawValue): a scope compares only TEXT, INTEGER, REAL or BOOLEAN columns",
                    field: field)
            }
            guard !condition.values.isEmpty else {
                throw DallyError(.badRequest, "the scope on '\(column.name)' lists no value", field: field)
            }
            var values: [Value] = []
            for json in condition.values {
                let value: Value
                do {
                    value = try Value(json: json, for: column)
                } catch {
                    throw DallyError(error.code, error.message, field: field)
                }
                guard value != .null else {
                    throw DallyError(.badRequest, "a scope value cannot be null (column '\(column.name)')", field: field)
                }
                values.append(value)
            }
            typed.append(TypedScope.Condition(column: column.name, values: values))
        }
        return TypedScope(conditions: typed)
    }
}

/// A ``RowScope`` checked against its table: each value has its column's type.
public struct TypedScope: Sendable, Equatable {
    public struct Condition: Sendable, Equatable {
        public var column: String
        public var values: [Value]
    }

    public var conditions: [Condition]

    /// Whether a row with these column values is in the scope. `value(column)` gives a column's
    /// value, nil or `.null` when it has none (a tombstone is in no scope).
    public func matches(_ value: (String) -> Value?) -> Bool {
        conditions.allSatisfy { condition in
            guard let actual = value(condition.column), actual != .null else { return false }
            return condition.values.contains(actual)
        }
    }
}
