import DallyCore
import DallySync
import DallyTestSupport
import Testing

/// A table gateways scope on: `store` and `region` are its scope columns.
let shopOrders: TableSchema = {
    let base = table("shop_orders", [("store", .text), ("region", .text), ("total", .real), ("n", .integer)])
    return TableSchema(
        name: base.name, columns: base.columns, conflict: .lastWriterWins, policy: base.policy,
        scopeColumns: ["store", "region"])
}()

let scopeTables = [shopOrders, orders]

/// `store = <store>` (or any of several) as the cloud gets it from a gateway.
func storeScope(_ stores: String..., region: [String] = []) throws -> TypedScope {
    var conditions = [RowScope.Condition(column: "store", values: stores.map { .string($0) })]
    if !region.isEmpty { conditions.append(RowScope.Condition(column: "region", values: region.map { .string($0) })) }
    return try RowScope(conditions).validated(against: shopOrders)
}

func shopPut(_ id: String, base: Int64? = nil, store: String, region: String = "north", total: Double = 1)
    -> BatchRequest.Change
{
    cloudPut(id, base: base, [.string(store), .string(region), .double(total), .int(1)])
}

let shopColumns = ["store", "region", "total", "n"]

@Suite("Cloud store: scoped pages and the move log")
struct CloudStoreScopeTests {
    /// Gateway B writes 3 rows in each of stores S1, S2, S3 (versions 1…9, S1 at 1, 4, 7).
    func writeThreeStores(_ cloud: any CloudStore) async throws {
        var changes: [BatchRequest.Change] = []
        for i in 0..<9 { changes.append(shopPut("r\(i)", store: "S\(i % 3 + 1)")) }
        _ = try await cloud.send(
            cloudBatch("b-seed", gateway: "gw-b", replica: "rep-b", [cloudSection("shop_orders", shopColumns, changes)]))
    }

    @Test(arguments: Backend.allCases) func aScopedPageHoldsOnlyTheRowsInTheScope(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend, tables: scopeTables)
        defer { try? cloud.close() }
        try await writeThreeStores(cloud)
        let page = try await cloud.changes(
            table: "shop_orders", since: 0, limit: 10, excludingReplica: originA, scope: try storeScope("S1"))
        #expect(page.rows.map(\.id) == ["r0", "r3", "r6"])
        #expect(page.rows.allSatisfy { !$0.left && !$0.deleted && $0.values.first == .string("S1") })
        #expect(page.version == 9)
        #expect(!page.more)

        let two = try await cloud.changes(
            table: "shop_orders", since: 0, limit: 10, excludingReplica: originA, scope: try storeScope("S1", "S3"))
        #expect(two.rows.map(\.id) == ["r0", "r2", "r3", "r5", "r6", "r8"])

        let paged = try await cloud.changes(
            table: "shop_orders", since: 0, limit: 2, excludingReplica: originA, scope: try storeScope("S1"))
        #expect(paged.rows.map(\.id) == ["r0", "r3"])
        #expect(paged.more)
        #expect(paged.version == 4)

        let none = try await cloud.changes(
            table: "shop_orders", since: 0, limit: 10, excludingReplica: originA, scope: try storeScope("S9"))
        #expect(none.rows.isEmpty)
        #expect(none.version == 9)
        #expect(try await cloud.hasChanges(table: "shop_orders", since: 0, excludingReplica: originA, scope: try storeScope("S1")))
        #expect(try await !cloud.hasChanges(table: "shop_orders", since: 0, excludingReplica: originA, scope: try storeScope("S9")))
        #expect(try await !cloud.hasChanges(table: "shop_orders", since: 7, excludingReplica: originA, scope: try storeScope("S1")))
    }

    @Test(arguments: Backend.allCases) func aRowThatMovesOutComesAsLeftAndWholeToItsNewScope(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend, tables: scopeTables)
        defer { try? cloud.close() }
        try await writeThreeStores(cloud)
        // r0 moves from S1 to S2 (version 10).
        _ = try await cloud.send(
            cloudBatch("b-move", gateway: "gw-b", replica: "rep-b", [
                cloudSection("shop_orders", shopColumns, [shopPut("r0", base: 1, store: "S2")])
            ]))
        let forS1 = try await cloud.changes(
            table: "shop_orders", since: 9, limit: 10, excludingReplica: originA, scope: try storeScope("S1"))
        #expect(forS1.rows.map(\.id) == ["r0"])
        #expect(forS1.rows.first?.left == true)
        #expect(forS1.rows.first?.values == [])
        #expect(forS1.rows.first?.version == 10)
        let forS2 = try await cloud.changes(
            table: "shop_orders", since: 9, limit: 10, excludingReplica: originA, scope: try storeScope("S2"))
        #expect(forS2.rows.map(\.id) == ["r0"])
        #expect(forS2.rows.first?.left == false)
        #expect(forS2.rows.first?.values.first == .string("S2"))

        // A change that leaves the scope columns alone (r0 in S2 again, r3 in S1) is no move:
        // S1 sees r3 only, no second `left` for r0.
        _ = try await cloud.send(
            cloudBatch("b-edit", gateway: "gw-b", replica: "rep-b", [
                cloudSection("shop_orders", shopColumns, [
                    shopPut("r0", base: 10, store: "S2", total: 5), shopPut("r3", base: 4, store: "S1", total: 5),
                ])
            ]))
        let later = try await cloud.changes(
            table: "shop_orders", since: 10, limit: 10, excludingReplica: originA, scope: try storeScope("S1"))
        #expect(later.rows.map(\.id) == ["r3"])
        #expect(later.version == 12)
        // A gateway whose cursor is older than the move still learns that r0 left.
        let fromStart = try await cloud.changes(
            table: "shop_orders", since: 0, limit: 10, excludingReplica: originA, scope: try storeScope("S1"))
        #expect(fromStart.rows.map(\.id) == ["r6", "r0", "r3"])
        #expect(fromStart.rows.map(\.left) == [false, true, false])

        // A row moved back in comes whole.
        _ = try await cloud.send(
            cloudBatch("b-back", gateway: "gw-b", replica: "rep-b", [
                cloudSection("shop_orders", shopColumns, [shopPut("r0", base: 11, store: "S1")])
            ]))
        let back = try await cloud.changes(
            table: "shop_orders", since: 12, limit: 10, excludingReplica: originA, scope: try storeScope("S1"))
        #expect(back.rows.map(\.id) == ["r0"])
        #expect(back.rows.first?.left == false)
        #expect(back.rows.first?.values.first == .string("S1"))
    }

    @Test(arguments: Backend.allCases) func aDeletedRowReachesItsScopeAsATombstone(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend, tables: scopeTables)
        defer { try? cloud.close() }
        try await writeThreeStores(cloud)
        _ = try await cloud.send(
            cloudBatch("b-del", gateway: "gw-b", replica: "rep-b", [
                cloudSection("shop_orders", shopColumns, [cloudDelete("r3", base: 4), cloudDelete("r4", base: 5)])
            ]))
        let forS1 = try await cloud.changes(
            table: "shop_orders", since: 9, limit: 10, excludingReplica: originA, scope: try storeScope("S1"))
        #expect(forS1.rows.map(\.id) == ["r3"])
        #expect(forS1.rows.first?.deleted == true)
        #expect(forS1.rows.first?.left == false)
        #expect(try await cloud.hasChanges(table: "shop_orders", since: 9, excludingReplica: originA, scope: try storeScope("S1")))
        #expect(try await !cloud.hasChanges(table: "shop_orders", since: 9, excludingReplica: originA, scope: try storeScope("S3")))
    }

    @Test(arguments: Backend.allCases) func aScopeOnSeveralColumnsNeedsAllOfThem(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend, tables: scopeTables)
        defer { try? cloud.close() }
        _ = try await cloud.send(
            cloudBatch("b-1", gateway: "gw-b", replica: "rep-b", [
                cloudSection("shop_orders", shopColumns, [
                    shopPut("n1", store: "S1", region: "north"), shopPut("s1", store: "S1", region: "south"),
                    shopPut("e2", store: "S2", region: "east"),
                ])
            ]))
        let scope = try storeScope("S1", "S2", region: ["north", "east"])
        let page = try await cloud.changes(table: "shop_orders", since: 0, limit: 10, excludingReplica: originA, scope: scope)
        #expect(page.rows.map(\.id) == ["n1", "e2"])
        // n1 moves to the south: it leaves, though its store is unchanged.
        _ = try await cloud.send(
            cloudBatch("b-2", gateway: "gw-b", replica: "rep-b", [
                cloudSection("shop_orders", shopColumns, [shopPut("n1", base: 1, store: "S1", region: "south")])
            ]))
        let moved = try await cloud.changes(table: "shop_orders", since: 3, limit: 10, excludingReplica: originA, scope: scope)
        #expect(moved.rows.map(\.id) == ["n1"])
        #expect(moved.rows.first?.left == true)
    }

    @Test(arguments: Backend.allCases) func aBatchAnswerCarriesOnlyTheScopedRows(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend, tables: scopeTables)
        defer { try? cloud.close() }
        try await writeThreeStores(cloud)
        var pull = cloudBatch("a-pull", since: [("shop_orders", 0)], [])
        pull.scopes = TableScopes(["shop_orders": RowScope([.init(column: "store", values: [.string("S2")])])])
        let answer = try await cloud.send(pull)
        #expect(answer.changes.first?.rows.map(\.id) == ["r1", "r4", "r7"])
        #expect(answer.changes.first?.version == 9)

        var write = cloudBatch(
            "a-write", since: [("shop_orders", 9)],
            [cloudSection("shop_orders", shopColumns, [shopPut("a1", store: "S2")])])
        write.scopes = pull.scopes
        _ = try await cloud.send(cloudBatch("b-more", gateway: "gw-b", replica: "rep-b", [
            cloudSection("shop_orders", shopColumns, [shopPut("b1", store: "S2"), shopPut("b3", store: "S3")])
        ]))
        let written = try await cloud.send(write)
        #expect(written.allRows.count == 1)
        #expect(written.changes.first?.rows.map(\.id) == ["b1"])
    }

    @Test(arguments: Backend.allCases) func aScopeOnAColumnTheCloudDoesNotIndexIsRefused(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend, tables: scopeTables)
        defer { try? cloud.close() }
        var pull = cloudBatch("a-pull", since: [("shop_orders", 0)], [])
        pull.scopes = TableScopes(["shop_orders": RowScope([.init(column: "total", values: [.double(1)])])])
        await #expect(throws: DallyError.self) { _ = try await cloud.send(pull) }
        do {
            _ = try await cloud.send(pull)
        } catch let error as DallyError {
            #expect(error.code == .badRequest)
            #expect(error.field == "scopes.shop_orders.total")
        }
        pull.scopes = TableScopes(["shop_orders": RowScope([.init(column: "store", values: [.int(3)])])])
        do {
            _ = try await cloud.send(pull)
            Issue.record("a number for a TEXT column was accepted")
        } catch let error as DallyError {
            #expect(error.code == .wrongType)
        }
    }

    @Test(arguments: Backend.allCases) func theMoveLogSurvivesAReopen(_ backend: Backend) async throws {
        let place = try await CloudPlace(backend)
        let first = try await place.open(tables: scopeTables)
        try await writeThreeStores(first)
        try first.close()
        let cloud = try await place.open(tables: scopeTables)
        defer { try? cloud.close() }
        _ = try await cloud.send(
            cloudBatch("b-move", gateway: "gw-b", replica: "rep-b", [
                cloudSection("shop_orders", shopColumns, [shopPut("r0", base: 1, store: "S2")])
            ]))
        let forS1 = try await cloud.changes(
            table: "shop_orders", since: 9, limit: 10, excludingReplica: originA, scope: try storeScope("S1"))
        #expect(forS1.rows.map(\.left) == [true])
    }
}
