import Testing

@testable import DallyCore

@Suite("Row scopes")
struct RowScopeTests {
    let schema = TableSchema(
        name: "orders",
        columns: [
            Column(name: "store", type: .text), Column(name: "n", type: .integer), Column(name: "x", type: .real),
            Column(name: "paid", type: .boolean), Column(name: "doc", type: .json),
        ],
        conflict: .lastWriterWins,
        policy: SyncPolicy(
            localOnly: false, atomicSync: false, uploadRows: UploadPolicy(maxDelay: .seconds(1), networks: ["wifi"]),
            uploadObjects: UploadPolicy(maxDelay: .seconds(1), networks: ["wifi"]),
            downloadRows: DownloadPolicy(period: .seconds(1), networks: ["wifi"]),
            downloadObjects: DownloadPolicy(period: .seconds(1), networks: ["wifi"])))

    @Test func valuesTakeTheirColumnsTypesAndMatchAllConditions() throws {
        let scope = try RowScope([
            .init(column: "store", values: [.string("S1"), .string("S2")]), .init(column: "n", values: [.int(3)]),
            .init(column: "x", values: [.int(2)]), .init(column: "paid", values: [.bool(false)]),
        ]).validated(against: schema)
        let row: [String: Value] = ["store": .text("S2"), "n": .integer(3), "x": .real(2), "paid": .boolean(false)]
        #expect(scope.matches { row[$0] })
        #expect(!scope.matches { $0 == "store" ? .text("S3") : row[$0] })
        #expect(!scope.matches { $0 == "paid" ? .boolean(true) : row[$0] })
        #expect(!scope.matches { $0 == "n" ? .null : row[$0] })
        #expect(!scope.matches { _ in nil })
    }

    @Test func conditionsAreKeptInColumnOrder() {
        let a = RowScope([.init(column: "store", values: [.string("S1")]), .init(column: "n", values: [.int(1)])])
        let b = RowScope([.init(column: "n", values: [.int(1)]), .init(column: "store", values: [.string("S1")])])
        #expect(a == b)
        #expect(a.columns == ["n", "store"])
    }

    @Test func whatCannotBeComparedIsRefusedWithItsColumn() {
        func refusal(_ scope: RowScope) -> DallyError? {
            do {
                _ = try scope.validated(against: schema, field: "scope.")
                return nil
            } catch {
                return error
            }
        }
        #expect(refusal(RowScope([.init(column: "nope", values: [.int(1)])]))?.code == .unknownColumn)
        #expect(refusal(RowScope([.init(column: "doc", values: [.string("x")])]))?.code == .wrongType)
        #expect(refusal(RowScope([.init(column: "n", values: [.string("x")])]))?.field == "scope.n")
        #expect(refusal(RowScope([.init(column: "n", values: [])]))?.field == "scope.n")
        #expect(refusal(RowScope([.init(column: "n", values: [.null])]))?.code == .badRequest)
        // More values than a store binds in one statement, over all the scope's columns.
        let many = RowScope([
            .init(column: "n", values: (0..<600).map { .int($0) }),
            .init(column: "store", values: (0..<401).map { .string("S\($0)") }),
        ])
        #expect(refusal(many)?.code == .badRequest)
        #expect(refusal(many)?.field == "scope.store")
        #expect(refusal(RowScope([.init(column: "n", values: (0..<1_000).map { .int($0) })])) == nil)
    }
}
