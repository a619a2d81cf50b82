/// The tables a gateway told its cloud it declares (`POST /v1/tables`, PROTOCOL.md §7.5), and
/// when: what the cloud keeps of each gateway to show, in its `/stats` and `/metrics`, which
/// sites are behind it (a column added in the cloud that a site does not declare yet) or ahead
/// of it, before their changes or pulls are held.
///
/// ```swift
/// let told = ToldDeclarations(gateway: "shop-12", declared: document, toldAt: now)
/// told.differences(from: TableDeclarations(schemas: cloudTables))
/// // ["orders": ["columns_not_declared": ["note"]]]
/// ```
public struct ToldDeclarations: Sendable, Equatable {
    public let gateway: String
    public let declared: TableDeclarations
    /// Milliseconds since 1970.
    public let toldAt: Int64

    public init(gateway: String, declared: TableDeclarations, toldAt: Int64) {
        self.gateway = gateway
        self.declared = declared
        self.toldAt = toldAt
    }

    /// Per table the gateway syncs that differs from `cloud`'s declaration: each difference's
    /// code and the columns it names. The codes are the gateway's (``DeclarationDifference``,
    /// what it holds back) and `columns_not_declared`, the cloud's columns the gateway lacks:
    /// no difference to the gateway, which leaves them out of its rows, but a site not yet
    /// given a column the cloud added.
    public func differences(from cloud: TableDeclarations) -> [String: [String: [String]]] {
        let held = DeclarationDifference.of(gateway: declared, cloud: cloud)
        var tables: [String: [String: [String]]] = [:]
        for table in declared.tables {
            var codes = Dictionary(uniqueKeysWithValues: (held[table.name]?.named ?? []).map { ($0.code, $0.columns) })
            if let cloudTable = cloud.table(named: table.name) {
                let declaredHere = Set(table.columns.map(\.name))
                let lacking = cloudTable.columns.map(\.name).filter { !declaredHere.contains($0) }
                if !lacking.isEmpty { codes["columns_not_declared"] = lacking }
            }
            if !codes.isEmpty { tables[table.name] = codes }
        }
        return tables
    }
}
