import DallyClient
import Testing

/// Rows typed through Codable against a real gateway: write, read, change, delete, batch, pages,
/// optimistic concurrency.
@Suite struct RowTests {
    @Test func typedRoundTrip() async throws {
        try await ClientSystem.run { system in
            try await system.with { client in
                let orders = client.table("orders", as: Order.self)
                let order = Order(customer: "Ada", total: 12.5, paid: false, items: [.init(sku: "A1", qty: 2)], qty: 3)
                let saved = try await orders.put(id: "o1", order)
                #expect(saved.id == "o1")
                #expect(saved.values == order)
                #expect(saved.deleted == false)
                #expect(saved.version == nil)

                let read = try #require(try await orders.get(id: "o1"))
                #expect(read.values == order)
                #expect(read.seq == saved.seq)

                let paid = try await orders.patch(id: "o1", Payment(paid: true))
                #expect(paid.values?.paid == true)
                #expect(paid.values?.customer == "Ada")
                #expect(paid.seq > saved.seq)

                let gone = try await orders.delete(id: "o1")
                #expect(gone.deleted)
                #expect(gone.values == nil)
                #expect(try await orders.get(id: "o1") == nil)

                // Columns left out of a put become null; ids with ':' and '~' travel intact.
                let sparse = try await orders.put(id: "sku:A1~2", Order(customer: "Bea"))
                #expect(sparse.id == "sku:A1~2")
                #expect(try await orders.get(id: "sku:A1~2")?.values == Order(customer: "Bea"))
            }
        }
    }

    @Test func versionMismatchCarriesTheCurrentRow() async throws {
        try await ClientSystem.run { system in
            try await system.with { client in
                let orders = client.table("orders", as: Order.self)
                let first = try await orders.put(id: "o2", Order(total: 1), expectedSeq: 0)
                // Create-only again: the row exists.
                do {
                    try await orders.put(id: "o2", Order(total: 2), expectedSeq: 0)
                    Issue.record("a second create-only put succeeded")
                } catch DallyClientError.versionMismatch(let current) {
                    let row = try #require(current).decoded(as: Order.self)
                    #expect(row.seq == first.seq)
                    #expect(row.values?.total == 1)
                }
                // A write based on the current seq goes through; one based on an old seq does not.
                let second = try await orders.patch(id: "o2", ["total": 3.0], expectedSeq: first.seq)
                await #expect(throws: DallyClientError.self) { try await orders.delete(id: "o2", expectedSeq: first.seq) }
                do {
                    try await orders.patch(id: "o2", ["total": 4.0], expectedSeq: first.seq)
                } catch let error as DallyClientError {
                    #expect(error.code == .versionMismatch)
                    #expect(error.status == 409)
                    guard case .versionMismatch(let current) = error else { throw error }
                    #expect(current?.seq == second.seq)
                }
                #expect(try await orders.delete(id: "o2", expectedSeq: second.seq).deleted)
            }
        }
    }

    @Test func batchAnswersSavedAndRefusedRows() async throws {
        try await ClientSystem.run { system in
            try await system.with { client in
                let orders = client.table("orders", as: Order.self)
                try await orders.put(id: "o2", Order(customer: "Cy"))
                var batch = Batch<Order>()
                batch.create(id: "o3", Order(customer: "Bea", total: 3))
                batch.update(id: "o4", ["total": "x"])
                batch.update(id: "o2", Payment(paid: true))
                batch.delete(id: "o3")
                let result = try await orders.batch(batch)
                // Applied in order: created, updated, deleted.
                #expect(result.saved == ["o3", "o2", "o3"])
                #expect(result.errors.count == 1)
                let refusal = try #require(result.errors.first)
                #expect(refusal.id == "o4")
                #expect(refusal.code == .wrongType || refusal.code == .notFound)
                #expect(try await orders.get(id: "o2")?.values?.paid == true)
                #expect(try await orders.get(id: "o3") == nil)

                var strict = Batch<Order>()
                strict.create(id: "o5", Order(total: 5))
                strict.update(id: "o6", ["colour": "red"])
                strict.allOrNothing = true
                let refused = try await orders.batch(strict)
                #expect(refused.errors.first?.code == .unknownColumn || refused.errors.first?.code == .notFound)
                #expect(try await orders.get(id: "o5") == nil)
            }
        }
    }

    @Test func pagesWalkTheTableWithFilters() async throws {
        try await ClientSystem.run { system in
            try await system.with { client in
                let orders = client.table("orders", as: Order.self)
                var batch = Batch<Order>()
                for i in 0..<12 { batch.create(id: "o\(i)", Order(customer: "c\(i)", paid: i % 3 == 0)) }
                #expect(try await orders.batch(batch).errors.isEmpty)
                try await orders.delete(id: "o11")

                var seen: [String] = []
                var pages = 0
                var last: Int64 = 0
                for try await page in orders.pages(pageSize: 5) {
                    pages += 1
                    for row in page.rows {
                        #expect(row.seq > last)
                        last = row.seq
                    }
                    seen += page.rows.map(\.id)
                }
                #expect(seen == (0..<11).map { "o\($0)" })
                #expect(pages == 3)

                var paid: [String] = []
                for try await page in orders.pages(matching: ["paid": "true"], pageSize: 2) { paid += page.rows.map(\.id) }
                #expect(paid == ["o0", "o3", "o6", "o9"])

                var withTombstones: [Row<Order>] = []
                for try await page in orders.pages(since: last, includeDeleted: true) { withTombstones += page.rows }
                #expect(withTombstones.map(\.id) == ["o11"])
                #expect(withTombstones.first?.deleted == true)
            }
        }
    }
}
