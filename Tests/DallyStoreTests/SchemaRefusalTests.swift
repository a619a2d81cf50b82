import DallyCore
import DallySync
import Testing

@testable import DallyStore

/// Changes the cloud refused for lacking their table or column go again on their own
/// (``SchemaRefusals``).
@Suite("Changes refused for the cloud's schema")
struct SchemaRefusalTests {
    let store: ReplicaStore

    init() throws {
        store = try ReplicaStore.open(directory: temporaryDirectory(), tables: [orders, notes])
    }

    func ids(_ batch: OutgoingBatch?) throws -> [String] {
        try batch.map { try sentRequest($0).sections.flatMap(\.changes).map(\.id).sorted() } ?? []
    }

    @Test func oneGoesAsAProbeAndTheRestFollowOnceTheCloudAcceptsAChangeOfTheTable() async throws {
        for id in ["o1", "o2", "o3", "o4"] { _ = try await store.write(put(id, [(0, .text(id))]), table: "orders") }
        _ = try await store.write(put("n1", [(0, .text("n"))]), table: "notes")
        let batch = try #require(try await store.nextBatch(gateway: "gw", maxRows: 100))
        let lacking = BatchAnswer.RowRejection(code: "unknown_column", message: "no column 'paid'", field: "paid")
        let badValue = BatchAnswer.RowRejection(code: "wrong_type", message: "no", field: "customer")
        _ = try await store.applyAnswer(
            BatchAnswer(
                batchID: batch.batchID, replayed: false,
                results: [
                    BatchAnswer.SectionResult(table: "notes", rows: [.rejected(id: "n1", .init(code: "unknown_table", message: "no", field: nil))]),
                    BatchAnswer.SectionResult(
                        table: "orders",
                        rows: [.rejected(id: "o1", lacking), .rejected(id: "o2", lacking), .rejected(id: "o3", lacking), .rejected(id: "o4", badValue)]),
                ], changes: []))
        #expect(try await store.nextBatch(gateway: "gw", maxRows: 100) == nil)

        // One per table, the oldest.
        #expect(try await store.retrySchemaRefusals(table: "orders") == ["orders"])
        let probe = try #require(try await store.nextBatch(gateway: "gw", maxRows: 100))
        #expect(try ids(probe).count == 1)
        #expect(try await store.conflicts(table: "orders", includeResolved: true, limit: 10).count == 3)

        // Accepted: the other refusals for the schema go, the bad value stays parked.
        let probed = try #require(try ids(probe).first)
        _ = try await store.applyAnswer(replicaAnswer(probe, [.accepted(id: probed, version: 1)]))
        #expect(try ids(try await store.nextBatch(gateway: "gw", maxRows: 100)) == ["o1", "o2", "o3"].filter { $0 != probed })
        let left = try await store.conflicts(table: "orders", includeResolved: true, limit: 10)
        #expect(left.map(\.id) == ["o4"])

        // A probe of every table.
        #expect(try await store.retrySchemaRefusals() == ["notes"])
        #expect(try await store.retrySchemaRefusals().isEmpty)
    }
}
