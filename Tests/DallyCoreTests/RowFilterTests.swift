import DallyCore
import Testing

@Suite("RowFilter")
struct RowFilterTests {
    @Test func equalitiesAndAScopeAreANDed() throws {
        let schema = TableSchema(
            name: "tasks", columns: [Column(name: "user_id", type: .text), Column(name: "status", type: .text)],
            conflict: .lastWriterWins,
            policy: SyncPolicy(
                localOnly: false, atomicSync: false,
                uploadRows: UploadPolicy(maxDelay: .seconds(60), networks: ["wired"]),
                uploadObjects: UploadPolicy(maxDelay: .seconds(600), networks: ["wired"]),
                downloadRows: DownloadPolicy(period: .seconds(60), networks: ["wired"]),
                downloadObjects: DownloadPolicy(period: .seconds(600), networks: ["wired"])))
        let scope = try RowScope([.init(column: "user_id", values: [.string("u7"), .string("u8")])]).validated(against: schema)
        var filter = RowFilter(equalities: [("status", .text("open"))])
        filter.and(scope)
        #expect(filter.columns == ["status", "user_id"])
        #expect(filter.matches { ["status": Value.text("open"), "user_id": .text("u8")][$0] })
        #expect(!filter.matches { ["status": Value.text("open"), "user_id": .text("u9")][$0] })
        #expect(!filter.matches { ["status": Value.text("done"), "user_id": .text("u7")][$0] })
        #expect(!filter.matches { _ in nil })  // a tombstone
    }

    @Test func nullAsksForANullColumn() {
        let filter = RowFilter(equalities: [("status", .null)])
        #expect(filter.matches { _ in nil })
        #expect(!filter.matches { _ in .text("open") })
        #expect(RowFilter.all.matches { _ in nil })
        #expect(RowFilter.all.isEmpty)
    }

    @Test func equalFiltersShareAKey() {
        let a = RowFilter(equalities: [("a", .integer(1)), ("b", .text("x"))])
        let b = RowFilter(equalities: [("b", .text("x")), ("a", .integer(1))])
        #expect(a.key == b.key)
        #expect(a.key != RowFilter(equalities: [("a", .integer(2)), ("b", .text("x"))]).key)
    }
}
