import DallyCore

/// How a gateway's declaration of a table differs from its cloud's (``TableDeclarations``),
/// and what it holds back until they agree.
///
/// - A table or columns the cloud lacks, or a column typed otherwise, hold the table's
///   changes in the gateway's outbox (``holdsUploads``): the cloud would refuse each
///   (`unknown_table`, `unknown_column`, `wrong_type`) after its bytes had crossed the link.
/// - Types that differ, or a scope on columns the cloud does not serve scoped pages for (not
///   in its `scope_columns`), stop the table's pulls (``holdsPulls``): a value of the cloud's
///   type that the gateway's column cannot hold would be dropped here (`values_not_held`), and
///   a local write to the row would send what the gateway kept over the cloud's value; a scope
///   the cloud refuses fails the whole request, every table's.
///
/// A column only the cloud declares is no difference: the gateway leaves it out, as an older
/// gateway does.
///
/// ```swift
/// let differences = DeclarationDifference.of(gateway: schemas, cloud: declared)
/// differences["orders"]?.holdsPulls   // true when a column's types differ
/// ```
public struct DeclarationDifference: Sendable, Equatable {
    /// The cloud has no table of this name.
    public var tableMissing = false
    /// The gateway's columns the cloud's table lacks, in the gateway's order.
    public var columnsMissing: [String] = []
    /// Columns both declare, typed otherwise, in the gateway's order.
    public var typesDiffer: [TypeDifference] = []
    /// Columns of the gateway's scope the cloud does not list in `scope_columns`.
    public var scopeNotServed: [String] = []

    public struct TypeDifference: Sendable, Equatable {
        public let column: String
        /// Each side's type as it declares it (a newer side may declare one the other lacks).
        public let gateway: String
        public let cloud: String

        public init(column: String, gateway: String, cloud: String) {
            self.column = column
            self.gateway = gateway
            self.cloud = cloud
        }
    }

    public init(
        tableMissing: Bool = false, columnsMissing: [String] = [], typesDiffer: [TypeDifference] = [],
        scopeNotServed: [String] = []
    ) {
        self.tableMissing = tableMissing
        self.columnsMissing = columnsMissing
        self.typesDiffer = typesDiffer
        self.scopeNotServed = scopeNotServed
    }

    public var isEmpty: Bool { codes.isEmpty }

    /// Whether the table's changes wait in the outbox until the declarations agree.
    public var holdsUploads: Bool { tableMissing || !columnsMissing.isEmpty || !typesDiffer.isEmpty }

    /// Whether the table is not pulled (nor followed) until the declarations agree.
    public var holdsPulls: Bool { !typesDiffer.isEmpty || !scopeNotServed.isEmpty }

    /// Stable codes for stats and logs, the gravest first.
    public var codes: [String] { named.map(\.code) }

    /// Each difference's code, the gravest first, with the columns it names (none for
    /// `table_missing`).
    public var named: [(code: String, columns: [String])] {
        var named: [(code: String, columns: [String])] = []
        if !typesDiffer.isEmpty { named.append(("types_differ", typesDiffer.map(\.column))) }
        if !scopeNotServed.isEmpty { named.append(("scope_not_served", scopeNotServed)) }
        if tableMissing { named.append(("table_missing", [])) }
        if !columnsMissing.isEmpty { named.append(("columns_missing", columnsMissing)) }
        return named
    }

    /// What holds the table back, in a word per direction: `["uploads"]`, `["pulls"]`, or both.
    public var held: [String] {
        (holdsUploads ? ["uploads"] : []) + (holdsPulls ? ["pulls"] : [])
    }

    /// What differs, what waits and what to do, for an operator.
    public var message: String {
        var parts: [String] = []
        if !typesDiffer.isEmpty {
            let listed = typesDiffer.map { "\($0.column) is \($0.gateway) here and \($0.cloud) in the cloud" }
            parts.append(
                listed.joined(separator: "; ")
                    + ": make the gateway's and the cloud's [[tables]] blocks the same; the table does not sync until then")
        }
        if !scopeNotServed.isEmpty {
            parts.append(
                "the cloud's table does not list \(scopeNotServed.joined(separator: ", ")) in scope_columns, so it serves "
                    + "no pages of this gateway's scope: add "
                    + (scopeNotServed.count == 1 ? "it" : "them") + " to the cloud's config; the table is not pulled until then")
        }
        if tableMissing {
            parts.append("the cloud declares no such table; the table's changes wait here until its [[tables]] declares it")
        }
        if !columnsMissing.isEmpty {
            parts.append(
                "the cloud's table lacks \(columnsMissing.joined(separator: ", ")); the table's changes wait here until the cloud declares "
                    + (columnsMissing.count == 1 ? "it" : "them"))
        }
        return parts.joined(separator: "; ")
    }

    /// Per table of the gateway's synced `schemas` that differs from `cloud`'s declaration.
    public static func of(gateway schemas: [TableSchema], cloud: TableDeclarations) -> [String: DeclarationDifference] {
        of(gateway: TableDeclarations(gateway: schemas), cloud: cloud)
    }

    /// Per table of the gateway's declarations (``TableDeclarations/init(gateway:)``) that
    /// differs from `cloud`'s.
    public static func of(gateway: TableDeclarations, cloud: TableDeclarations) -> [String: DeclarationDifference] {
        var differences: [String: DeclarationDifference] = [:]
        for table in gateway.tables {
            var difference = DeclarationDifference()
            if let declared = cloud.table(named: table.name) {
                let cloudTypes = Dictionary(declared.columns.map { ($0.name, $0.type) }) { first, _ in first }
                for column in table.columns {
                    guard let type = cloudTypes[column.name] else {
                        difference.columnsMissing.append(column.name)
                        continue
                    }
                    if type.uppercased() != column.type.uppercased() {
                        difference.typesDiffer.append(TypeDifference(column: column.name, gateway: column.type, cloud: type))
                    }
                }
                let served = Set(declared.scopeColumns)
                difference.scopeNotServed = table.scopeColumns.filter { !served.contains($0) }
            } else {
                difference.tableMissing = true
            }
            if !difference.isEmpty { differences[table.name] = difference }
        }
        return differences
    }
}
