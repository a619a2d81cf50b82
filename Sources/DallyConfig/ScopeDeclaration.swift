import DallyCore
import TOMLKit

/// Reads the scope keys of a `[[tables]]` block:
///
/// ```toml
/// [[tables]]
/// name = "orders"
/// columns = ["store_id TEXT", "region TEXT", "total REAL"]
/// scope = { store_id = "S12", region = ["north", "east"] }   # a gateway: the rows it holds
/// scope_writes = "reject"                                    # a gateway: refuse writes outside
/// scope_columns = ["store_id", "region"]                     # the cloud: columns gateways may scope on
/// ```
///
/// Every column must be one of the table's and comparable (TEXT, INTEGER, REAL, BOOLEAN), and
/// every value must fit its column: a mistake is refused at `--check` with its key and line,
/// not found later as a gateway that silently holds nothing.
enum ScopeDeclaration {
    /// The `scope` key of `section` (a table whose columns are `schema`'s), or nil when absent.
    static func readScope(_ section: TOMLSection, key: String = "scope", schema: TableSchema) throws(KeyError)
        -> RowScope?
    {
        guard let scopeSection = try section.section(key) else { return nil }
        var conditions: [RowScope.Condition] = []
        for column in scopeSection.table.keys.sorted() {
            let columnKey = scopeSection.keyPath(column)
            guard let value = scopeSection.table[column] else { continue }
            let values: [JSONValue]
            if value.type == .array, let array = value.array {
                var items: [JSONValue] = []
                for (i, element) in array.enumerated() {
                    items.append(try scalar(element, key: "\(columnKey)[\(i)]"))
                }
                values = items
            } else {
                values = [try scalar(value, key: columnKey)]
            }
            conditions.append(RowScope.Condition(column: column, values: values))
        }
        guard !conditions.isEmpty else {
            throw KeyError(key: scopeSection.path, reason: "an empty scope; give at least one column, or remove the key")
        }
        let scope = RowScope(conditions)
        do {
            _ = try scope.validated(against: schema)
        } catch {
            throw KeyError(key: scopeSection.keyPath(error.field ?? ""), reason: error.message)
        }
        return scope
    }

    /// A client token's `scope`: a table of scopes by table name, each read as a table's
    /// `scope` (known, comparable columns; values that fit), e.g.
    /// `scope = { orders = { user_id = "u7" } }`.
    static func readClientScopes(_ section: TOMLSection, schemas: [TableSchema]) throws(KeyError) -> [String: RowScope] {
        guard let byTable = try section.section("scope") else { return [:] }
        var scopes: [String: RowScope] = [:]
        for table in byTable.table.keys.sorted() {
            guard let schema = schemas.first(where: { $0.name == table }) else {
                throw KeyError(
                    key: byTable.keyPath(table),
                    reason: "unknown table '\(table)'; a token's scope is a table of scopes by table name, e.g. scope = { orders = { user_id = \"u7\" } }")
            }
            if let scope = try readScope(byTable, key: table, schema: schema) { scopes[table] = scope }
        }
        return scopes
    }

    /// `scope_writes`: `"accept"` (the default) or `"reject"`.
    static func readWrites(_ section: TOMLSection) throws(KeyError) -> ScopeWrites {
        let text = try section.string("scope_writes", default: ScopeWrites.accept.rawValue)
        guard let writes = ScopeWrites(rawValue: text) else {
            throw KeyError(
                key: section.keyPath("scope_writes"),
                reason: "unknown value '\(text)'; use one of "
                    + ScopeWrites.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return writes
    }

    /// `scope_columns` (the cloud's): comparable columns of the table, each named once.
    static func readColumns(_ section: TOMLSection, schema: TableSchema) throws(KeyError) -> [String] {
        let names = try section.stringArray("scope_columns") ?? []
        var seen: Set<String> = []
        for (i, name) in names.enumerated() {
            let key = "\(section.keyPath("scope_columns"))[\(i)]"
            guard let column = schema.column(named: name) else {
                throw KeyError(key: key, reason: "table '\(schema.name)' has no column '\(name)'")
            }
            guard RowScope.isComparable(column.type) else {
                throw KeyError(
                    key: key,
                    reason: "column '\(name)' is \(column.type.rawValue): scopes compare only TEXT, INTEGER, REAL or BOOLEAN columns")
            }
            guard seen.insert(name).inserted else { throw KeyError(key: key, reason: "'\(name)' is named twice") }
        }
        return names
    }

    private static func scalar(_ value: TOMLValueConvertible, key: String) throws(KeyError) -> JSONValue {
        switch value.type {
        case .string: if let text = value.string { return .string(text) }
        case .int: if let int = value.int { return .int(Int64(int)) }
        case .double: if let double = value.double { return .double(double) }
        case .bool: if let bool = value.bool { return .bool(bool) }
        default: break
        }
        throw KeyError(
            key: key, reason: "wrong type: a scope value is a string, a number or true/false (or an array of them), found \(value.type)")
    }
}
