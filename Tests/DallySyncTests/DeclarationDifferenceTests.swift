import DallyCore
import Foundation
import Testing

@testable import DallySync

@Suite("A gateway's declarations against its cloud's")
struct DeclarationDifferenceTests {
    static func table(_ name: String, _ columns: [(String, ColumnType)], localOnly: Bool = false) -> TableSchema {
        TableSchema(
            name: name, columns: columns.map { Column(name: $0.0, type: $0.1) }, conflict: .lastWriterWins,
            policy: SyncPolicy(
                localOnly: localOnly, atomicSync: false,
                uploadRows: UploadPolicy(maxDelay: .seconds(60), networks: ["wired"]),
                uploadObjects: UploadPolicy(maxDelay: .seconds(600), networks: ["wired"]),
                downloadRows: DownloadPolicy(period: .seconds(60), networks: ["wired"]),
                downloadObjects: DownloadPolicy(period: .seconds(600), networks: ["wired"])))
    }

    static let cloud = TableDeclarations(schemas: [
        table("orders", [("customer", .text), ("total", .real), ("items", .json)]),
        table("Photos", [("image", .object)]),
    ])

    @Test func typesThatDifferHoldBothWaysAndAMissingColumnTheChanges() {
        let gateway = [
            Self.table("orders", [("customer", .text), ("total", .integer), ("note", .text), ("items", .text)]),
            Self.table("photos", [("image", .object)]),
            Self.table("readings", [("value", .real)]),
            Self.table("scratch", [("x", .text)], localOnly: true),
        ]
        let differences = DeclarationDifference.of(gateway: gateway, cloud: Self.cloud)
        let orders = differences["orders"]
        #expect(
            orders?.typesDiffer
                == [.init(column: "total", gateway: "INTEGER", cloud: "REAL"), .init(column: "items", gateway: "TEXT", cloud: "JSON")])
        #expect(orders?.columnsMissing == ["note"])
        #expect(orders?.codes == ["types_differ", "columns_missing"])
        #expect(orders?.held == ["uploads", "pulls"])
        #expect(orders?.message.contains("total is INTEGER here and REAL in the cloud") == true)
        #expect(orders?.message.contains("lacks note") == true)
        // Table names compare as the configuration compares them, ignoring case.
        #expect(differences["photos"] == nil)
        #expect(differences["readings"] == DeclarationDifference(tableMissing: true))
        #expect(differences["readings"]?.held == ["uploads"])
        // A local-only table is nothing the cloud need know.
        #expect(differences["scratch"] == nil)
        #expect(differences.count == 2)
    }

    @Test func columnsTheCloudLacksHoldTheChangesNotThePulls() {
        let gateway = [Self.table("orders", [("customer", .text), ("note", .text), ("total", .real), ("due", .integer)])]
        let difference = DeclarationDifference.of(gateway: gateway, cloud: Self.cloud)["orders"]
        #expect(difference == DeclarationDifference(columnsMissing: ["note", "due"]))
        #expect(difference?.holdsUploads == true)
        #expect(difference?.holdsPulls == false)
        #expect(difference?.codes == ["columns_missing"])
        // A column only the cloud declares is left out here, as an older gateway does.
        #expect(DeclarationDifference.of(gateway: [Self.table("orders", [("customer", .text)])], cloud: Self.cloud).isEmpty)
    }

    @Test func aScopeOnColumnsTheCloudDoesNotServeHoldsThePullsNotTheChanges() {
        let plain = Self.table("orders", [("customer", .text), ("total", .real)])
        let scope = RowScope([.init(column: "customer", values: [.string("c1")])])
        let scoped = TableSchema(name: "orders", columns: plain.columns, conflict: plain.conflict, policy: plain.policy, scope: scope)
        let unserved = DeclarationDifference.of(gateway: [scoped], cloud: Self.cloud)["orders"]
        #expect(unserved == DeclarationDifference(scopeNotServed: ["customer"]))
        #expect(unserved?.held == ["pulls"])
        #expect(unserved?.message.contains("scope_columns") == true)
        let serving = TableDeclarations(tables: [
            .init(name: "orders", columns: [.init(name: "customer", type: "TEXT"), .init(name: "total", type: "REAL")], scopeColumns: ["customer"])
        ])
        #expect(DeclarationDifference.of(gateway: [scoped], cloud: serving).isEmpty)
    }

    @Test func aTypeThisGatewayDoesNotKnowIsADifferenceNotAnUnreadableAnswer() throws {
        let document = #"{"tables":[{"name":"orders","columns":[{"name":"customer","type":"GEOMETRY"}],"scope_columns":[]}]}"#
        let declared = try JSONDecoder().decode(TableDeclarations.self, from: Data(document.utf8))
        let difference = DeclarationDifference.of(gateway: [Self.table("orders", [("customer", .text)])], cloud: declared)
        #expect(difference["orders"] == DeclarationDifference(typesDiffer: [.init(column: "customer", gateway: "TEXT", cloud: "GEOMETRY")]))
    }

    @Test func theDocumentReadsBackAsWritten() throws {
        let bytes = try DocumentEncoder.encode(Self.cloud)
        #expect(String(decoding: bytes, as: UTF8.self).hasPrefix(#"{"tables":[{"columns":[{"name":"customer","type":"TEXT"}"#))
        #expect(try JSONDecoder().decode(TableDeclarations.self, from: Data(bytes)) == Self.cloud)
    }
}
