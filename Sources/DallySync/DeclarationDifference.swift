import DallyCore

/// How a gateway's declaration of a table differs from its cloud's (``CloudDeclarations``).
///
/// Every difference holds the table's changes in the gateway's outbox: the cloud would refuse
/// each (`unknown_table`, `unknown_column`, `wrong_type`), after its bytes had crossed the
/// link. Types that differ also stop the table's pulls (``holdsTable``): a value of the
/// cloud's type that the gateway's column cannot hold would be dropped here
/// (`values_not_held`), and a local write to the row would send what the gateway kept over
/// the cloud's value. A table or column the cloud lacks still comes down (without that
/// column): the cloud is being upgraded, and the changes go once it declares them. A column
/// only the cloud has is no difference: the gateway leaves it out, as an older gateway does.
///
/// ```swift
/// let differences = DeclarationDifference.of(gateway: schemas, cloud: declared)
/// differences["orders"]?.holdsTable   // true when a column's types differ
/// ```
public enum DeclarationDifference: Sendable, Equatable {
    /// The cloud has no table of this name.
    case tableMissing
    /// The cloud's table lacks these of the gateway's columns (in the gateway's order).
    case columnsMissing([String])
    /// These columns are typed otherwise in the cloud (in the gateway's order).
    case typesDiffer([TypeDifference])

    public struct TypeDifference: Sendable, Equatable {
        public let column: String
        public let gateway: ColumnType
        public let cloud: String

        public init(column: String, gateway: ColumnType, cloud: String) {
            self.column = column
            self.gateway = gateway
            self.cloud = cloud
        }
    }

    /// Whether the gateway holds the table both ways, pulls too, until the declarations agree
    /// (its changes wait whatever the difference).
    public var holdsTable: Bool {
        if case .typesDiffer = self { return true }
        return false
    }

    /// A stable code for stats and logs.
    public var code: String {
        switch self {
        case .tableMissing: "table_missing"
        case .columnsMissing: "columns_missing"
        case .typesDiffer: "types_differ"
        }
    }

    /// What differs and what to do, for an operator.
    public var message: String {
        switch self {
        case .tableMissing:
            return "the cloud declares no such table; the table's changes wait here until the cloud's [[tables]] declares it"
        case .columnsMissing(let columns):
            return "the cloud's table lacks \(columns.joined(separator: ", ")); the table's changes wait here until the cloud declares "
                + (columns.count == 1 ? "it" : "them")
        case .typesDiffer(let differences):
            let listed = differences.map { "\($0.column) is \($0.gateway.rawValue) here and \($0.cloud) in the cloud" }
            return "held: " + listed.joined(separator: "; ")
                + "; make the gateway's and the cloud's [[tables]] blocks the same (the table syncs again at the next check)"
        }
    }

    /// Per table of the gateway's synced `schemas` that differs from `cloud`'s declaration.
    public static func of(gateway schemas: [TableSchema], cloud: CloudDeclarations) -> [String: DeclarationDifference] {
        var differences: [String: DeclarationDifference] = [:]
        for schema in schemas where !schema.policy.localOnly {
            guard let declared = cloud.table(named: schema.name) else {
                differences[schema.name] = .tableMissing
                continue
            }
            let cloudTypes = Dictionary(declared.columns.map { ($0.name, $0.type) }) { first, _ in first }
            var missing: [String] = []
            var typed: [TypeDifference] = []
            for column in schema.columns {
                guard let type = cloudTypes[column.name] else {
                    missing.append(column.name)
                    continue
                }
                if type.uppercased() != column.type.rawValue {
                    typed.append(TypeDifference(column: column.name, gateway: column.type, cloud: type))
                }
            }
            if !typed.isEmpty {
                differences[schema.name] = .typesDiffer(typed)
            } else if !missing.isEmpty {
                differences[schema.name] = .columnsMissing(missing)
            }
        }
        return differences
    }
}
