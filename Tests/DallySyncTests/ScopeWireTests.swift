import DallyCore
import Testing

@testable import DallySync

@Suite("Scopes on the wire")
struct ScopeWireTests {
    let scopes = TableScopes([
        "orders": RowScope([
            .init(column: "store_id", values: [.string("S12")]),
            .init(column: "region", values: [.string("north"), .string("east")]),
        ])
    ])

    @Test func scopesEncodeInNameOrderAndReadBack() throws {
        let text = String(decoding: scopes.encode(), as: UTF8.self)
        #expect(text == #"{"orders":{"region":["north","east"],"store_id":["S12"]}}"#)
        #expect(try TableScopes.parseQuery(Substring(text)) == scopes)
        // A single value stands for a list of one.
        #expect(try TableScopes.parseQuery(#"{"orders":{"store_id":"S12","region":["north","east"]}}"#) == scopes)
    }

    @Test(arguments: [
        "not json", "[]", #"{"orders":[]}"#, #"{"orders":{}}"#, #"{"orders":{"a":{"b":1}}}"#, #"{"orders":{"a":null}}"#,
        #"{"1bad":{"a":1}}"#,
    ])
    func malformedScopesAreBadQueries(_ text: String) {
        #expect(throws: DallyError.self) { try TableScopes.parseQuery(Substring(text)) }
        do {
            _ = try TableScopes.parseQuery(Substring(text))
        } catch {
            #expect(error.code == .badQuery)
        }
    }

    @Test func aBatchCarriesItsScopesAndABatchWithoutKeepsItsBytes() throws {
        var batch = BatchRequest(batchID: "b1", gateway: "g", replica: "r", since: TableVersions([("orders", 3)]), sections: [])
        let plain = String(decoding: batch.encode(), as: UTF8.self)
        #expect(!plain.contains("scopes"))
        batch.scopes = scopes
        let decoded = try BatchRequest.decode(try JSONParser.parse(batch.encode()), maxRows: 10)
        #expect(decoded.scopes == scopes)
        #expect(decoded == batch)
    }

    @Test func aLeftRowTravelsWithoutValues() throws {
        let page = ChangePage(
            table: "orders", columns: ["store_id"], since: 0, version: 9, more: false,
            rows: [
                .init(id: "a", version: 7, updatedAt: 5, deleted: false, left: true, values: []),
                .init(id: "b", version: 8, updatedAt: 5, deleted: true, values: []),
            ])
        let text = String(decoding: page.encode(), as: UTF8.self)
        #expect(text.contains(#"["a",7,5,"left"]"#))
        #expect(!text.contains("columns"))
        let decoded = try ChangePage.decode(try JSONParser.parse(page.encode()))
        #expect(decoded.rows.map(\.left) == [true, false])
        #expect(decoded.rows.map(\.deleted) == [false, true])
        #expect(throws: DallyError.self) {
            try ChangePage.decode(try JSONParser.parse(#"{"table":"t","since":0,"version":1,"more":false,"rows":[["a",1,1,"gone"]]}"#))
        }
    }

    @Test func aScopedPageMergesRowsInScopeWithRowsThatLeftInVersionOrder() {
        func row(_ id: String, _ version: Int64, deleted: Bool = false) -> ChangePage.ChangedRow {
            .init(id: id, version: version, updatedAt: 1, deleted: deleted, values: deleted ? [] : [.string("S")])
        }
        let merged = ScopedRows.merge(
            inScope: [.init(row: row("a", 2), inScope: true), .init(row: row("c", 6), inScope: true)],
            movedOut: [
                .init(row: row("b", 4), inScope: false), .init(row: row("d", 5, deleted: true), inScope: false),
                // Moved out and back in: in both reads, sent once, whole.
                .init(row: row("c", 6), inScope: true),
            ],
            fetchLimit: 10)
        #expect(merged.map(\.id) == ["a", "b", "d", "c"])
        #expect(merged.map(\.left) == [false, true, false, false])
        #expect(merged[1].values.isEmpty)
        #expect(merged[2].deleted)
        let cut = ScopedRows.merge(
            inScope: [.init(row: row("a", 2), inScope: true)], movedOut: [.init(row: row("b", 1), inScope: false)],
            fetchLimit: 1)
        #expect(cut.map(\.id) == ["b"])
    }
}
