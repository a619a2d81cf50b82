import DallyCore

/// The scopes a gateway holds, per table, as it sends them with every downstream request
/// (PROTOCOL.md §7.4): `{"orders": {"store_id": ["S12"], "region": ["north", "east"]}}`.
///
/// A table absent here is not scoped: the gateway holds every row.
///
/// ```swift
/// let scopes = TableScopes(["orders": RowScope([.init(column: "store_id", values: [.string("S12")])])])
/// String(decoding: scopes.encode(), as: UTF8.self) // {"orders":{"store_id":["S12"]}}
/// ```
public struct TableScopes: Sendable, Equatable {
    public private(set) var byTable: [String: RowScope]

    public init(_ byTable: [String: RowScope] = [:]) { self.byTable = byTable }

    public var isEmpty: Bool { byTable.isEmpty }

    public subscript(table: String) -> RowScope? { byTable[table] }

    /// The scopes declared in `schemas` (a gateway's tables).
    public static func declared(in schemas: [TableSchema]) -> TableScopes {
        var byTable: [String: RowScope] = [:]
        for schema in schemas { if let scope = schema.scope { byTable[schema.name] = scope } }
        return TableScopes(byTable)
    }

    /// Only the scopes of `tables`.
    public func restricted(to tables: some Sequence<String>) -> TableScopes {
        var kept: [String: RowScope] = [:]
        for table in tables { if let scope = byTable[table] { kept[table] = scope } }
        return TableScopes(kept)
    }

    func write(to writer: inout JSONWriter) {
        writer.raw("{")
        for (t, table) in byTable.keys.sorted().enumerated() {
            if t > 0 { writer.raw(",") }
            writer.string(table)
            writer.raw(":{")
            for (c, condition) in (byTable[table]?.conditions ?? []).enumerated() {
                if c > 0 { writer.raw(",") }
                writer.string(condition.column)
                writer.raw(":[")
                for (v, value) in condition.values.enumerated() {
                    if v > 0 { writer.raw(",") }
                    writer.value(value)
                }
                writer.raw("]")
            }
            writer.raw("}")
        }
        writer.raw("}")
    }

    /// The compact JSON text, as the `scopes` query parameter carries it (percent-encoded).
    public func encode() -> [UInt8] {
        var writer = JSONWriter(capacity: 64)
        write(to: &writer)
        return writer.bytes
    }

    /// Reads the shape only: `{table: {column: value or [values]}}`. Whether the columns exist
    /// and may be scoped on is the cloud's check (``validated(_:field:)``).
    public static func read(_ value: JSONValue, path: String) throws(DallyError) -> TableScopes {
        guard case .object(let tables) = value else { throw WireError.malformed(path, "expected an object") }
        var byTable: [String: RowScope] = [:]
        for member in tables {
            let tablePath = "\(path).\(member.key)"
            let table = try WireError.tableName(.string(member.key), path: tablePath)
            guard byTable[table] == nil else { throw WireError.malformed(tablePath, "table named twice") }
            guard case .object(let columns) = member.value, !columns.isEmpty else {
                throw WireError.malformed(tablePath, "expected an object of column: [values]")
            }
            var conditions: [RowScope.Condition] = []
            var seen: Set<String> = []
            for column in columns {
                let columnPath = "\(tablePath).\(column.key)"
                guard seen.insert(column.key).inserted else { throw WireError.malformed(columnPath, "column named twice") }
                let values: [JSONValue]
                switch column.value {
                case .array(let items): values = items
                case .object, .null: throw WireError.malformed(columnPath, "expected a value or an array of values")
                default: values = [column.value]
                }
                conditions.append(RowScope.Condition(column: column.key, values: values))
            }
            byTable[table] = RowScope(conditions)
        }
        return TableScopes(byTable)
    }

    /// Parses the `scopes` query parameter (JSON text, already percent-decoded).
    public static func parseQuery(_ text: Substring, field: String = "scopes") throws(DallyError) -> TableScopes {
        let document: JSONValue
        do {
            document = try JSONParser.parse(Array(text.utf8))
        } catch {
            throw DallyError(.badQuery, "\(field) must be a JSON object {table: {column: [values]}}", field: field)
        }
        do {
            return try read(document, path: field)
        } catch {
            throw DallyError(.badQuery, error.message, field: field)
        }
    }

    /// Each scope checked against the cloud's table: the columns must be declared in its
    /// `scope_columns` (they have the index and the move log a scoped page needs).
    ///
    /// - Parameter schema: the cloud's table by name; a table it lacks is left out.
    public func validated(_ schema: (String) -> TableSchema?, field: String) throws(DallyError) -> [String: TypedScope] {
        var typed: [String: TypedScope] = [:]
        for (table, scope) in byTable {
            guard let tableSchema = schema(table) else { continue }
            for column in scope.columns where !tableSchema.scopeColumns.contains(column) {
                throw DallyError(
                    .badRequest,
                    "the cloud's table '\(table)' does not list '\(column)' in scope_columns; add it to the cloud's config to scope on it",
                    field: "\(field).\(table).\(column)")
            }
            typed[table] = try scope.validated(against: tableSchema, field: "\(field).\(table).")
        }
        return typed
    }
}
