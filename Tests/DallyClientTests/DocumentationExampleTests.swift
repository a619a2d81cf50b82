import DallyClient
import Testing

/// The whole program of docs/CLIENT.md, as written there (but for the URL and token), runs
/// against a real gateway: the page a newcomer starts from compiles and works.
@Suite struct DocumentationExampleTests {
    struct Order: Codable, Sendable {
        struct Item: Codable, Sendable { var sku: String; var qty: Int }
        var customer: String?
        var total: Double?
        var paid: Bool?
        var items: [Item]?
    }

    /// docs/CLIENT.md, "A whole program", `main()`'s body; answers what it printed.
    static func till(url: String, token: String) async throws -> [String] {
        var printed: [String] = []
        func print(_ items: Any...) { printed.append(items.map { "\($0)" }.joined(separator: " ")) }

        let client = DallyClient(url: url, token: token)
        let orders = client.table("orders", as: Order.self)
        do {
            // Write, read, change, delete.
            let saved = try await orders.put(id: "o1", Order(customer: "Ada", total: 12.5, paid: false))
            print("o1 at seq", saved.seq)
            try await orders.patch(id: "o1", ["paid": true], expectedSeq: saved.seq)
            if let row = try await orders.get(id: "o1") { print(row.values?.paid ?? false) }

            // Many rows in one transaction.
            var batch = Batch<Order>()
            batch.create(id: "o2", Order(customer: "Bea", total: 3))
            batch.update(id: "o1", ["total": 13.0])
            let result = try await orders.batch(batch)
            for refusal in result.errors { print("refused", refusal.id ?? "?", refusal.codeName, refusal.message) }

            // Pages, filtered.
            for try await page in orders.pages(matching: ["paid": "true"]) {
                for row in page.rows { print(row.id, row.values?.total ?? 0) }
            }

            // Follow changes as they happen; the feed never ends by itself.
            try await orders.delete(id: "o2")
            for try await change in orders.changes(since: 0) {
                print(change.deleted ? "deleted" : "changed", change.id, "cursor", change.seq)
                if change.deleted && change.id == "o2" { break }
            }
        } catch let error as DallyClientError {
            print("error:", error.code?.rawValue ?? "-", error.status ?? 0, error.message, error.field ?? "")
        }
        try await client.shutdown()
        return printed
    }

    @Test func theProgramOfClientMDRuns() async throws {
        try await ClientSystem.run { system in
            let printed = try await Self.till(url: system.url("gw-a"), token: ClientSystem.clientToken)
            #expect(printed.count == 5, "\(printed)")
            #expect(printed.first?.hasPrefix("o1 at seq") == true)
            #expect(printed.dropFirst().first == "true")
            #expect(printed.dropFirst(2).first == "o1 13.0")
            #expect(printed.dropFirst(3).first?.hasPrefix("changed o1 cursor") == true)
            #expect(printed.last?.hasPrefix("deleted o2 cursor") == true)
        }
    }
}
