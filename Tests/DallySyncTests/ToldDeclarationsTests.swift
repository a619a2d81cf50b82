import DallyCore
import Testing

@testable import DallySync

@Suite("What a gateway told its cloud it declares, against the cloud's")
struct ToldDeclarationsTests {
    static func table(_ name: String, _ columns: [(String, String)], scope: [String] = []) -> TableDeclarations.Table {
        .init(name: name, columns: columns.map { .init(name: $0.0, type: $0.1) }, scopeColumns: scope)
    }

    static let cloud = TableDeclarations(tables: [
        table("orders", [("customer", "TEXT"), ("total", "REAL"), ("note", "TEXT")], scope: ["customer"]),
        table("photos", [("image", "OBJECT")]),
        table("audit", [("entry", "TEXT")]),
    ])

    @Test func aSiteBehindAheadOrTypedOtherwiseIsNamedByTableAndColumn() {
        let told = ToldDeclarations(
            gateway: "shop-12",
            declared: TableDeclarations(tables: [
                // Behind: lacks `note`; ahead: declares `due`; `total` typed otherwise.
                Self.table("orders", [("customer", "TEXT"), ("total", "INTEGER"), ("due", "INTEGER")], scope: ["region"]),
                // Declared alike, the type's case aside.
                Self.table("Photos", [("image", "object")]),
                Self.table("readings", [("value", "REAL")]),
            ]),
            toldAt: 1_000)
        let differences = told.differences(from: Self.cloud)
        #expect(
            differences["orders"] == [
                "types_differ": ["total"], "scope_not_served": ["region"], "columns_missing": ["due"],
                "columns_not_declared": ["note"],
            ])
        #expect(differences["readings"] == ["table_missing": []])
        // A table the gateway does not sync (`audit`) is none of its business.
        #expect(differences.count == 2)
    }

    @Test func aSiteThatDeclaresAsTheCloudDoesDiffersInNothing() {
        let told = ToldDeclarations(gateway: "shop-1", declared: Self.cloud, toldAt: 1_000)
        #expect(told.differences(from: Self.cloud).isEmpty)
    }

    @Test func aGatewayTellsItsSyncedTablesWithItsScopesColumns() throws {
        let policy = SyncPolicy(
            localOnly: false, atomicSync: false,
            uploadRows: UploadPolicy(maxDelay: .seconds(60), networks: ["wired"]),
            uploadObjects: UploadPolicy(maxDelay: .seconds(600), networks: ["wired"]),
            downloadRows: DownloadPolicy(period: .seconds(60), networks: ["wired"]),
            downloadObjects: DownloadPolicy(period: .seconds(600), networks: ["wired"]))
        var local = policy
        local.localOnly = true
        let scope = RowScope([.init(column: "customer", values: [.string("c1")])])
        let columns = [Column(name: "customer", type: .text), Column(name: "total", type: .real)]
        let declared = TableDeclarations(gateway: [
            TableSchema(name: "orders", columns: columns, conflict: .lastWriterWins, policy: policy, scope: scope, scopeColumns: ["total"]),
            TableSchema(name: "scratch", columns: columns, conflict: .lastWriterWins, policy: local),
        ])
        #expect(
            declared
                == TableDeclarations(
                    tables: [Self.table("orders", [("customer", "TEXT"), ("total", "REAL")], scope: ["customer"])],
                    version: DallyVersion.current))
        // What is stored and sent reads back the same.
        #expect(try TableDeclarations(document: declared.encoded()) == declared)
    }
}
