import DallyCore
import DallySync
import Foundation
import Testing

@testable import DallyCloudStore
import DallyTestSupport
@testable import DallyStore

/// docs/PROTOCOL.md §9, end to end: the replica builds the documented request byte for byte
/// (but for the ids it chooses), the cloud store answers the documented answer, and the replica
/// ends in the documented state.
@Suite("Replica sync: the protocol's worked example")
struct ReplicaSyncWorkedExampleTests {
    static let exampleOrders = cloudTable(
        "orders", [("customer", .text), ("total", .real), ("paid", .boolean), ("items", .json)], conflict: .lastWriterWins)
    static let telemetry = table("telemetry", [("reading", .real)])

    static let batchID = "0b9c6a52-5f0e-4d7a-9a43-1c2e8f6d7b10"

    static let request = """
        {"batch":"0b9c6a52-5f0e-4d7a-9a43-1c2e8f6d7b10","gateway":"gateway-a","replica":"replica-a1",\
        "since":{"orders":39,"telemetry":0},\
        "sections":[{"table":"orders","columns":["customer","total","paid","items"],\
        "rows":[["o1",null,1795241160000,"put","Ada",12.5,false,[{"sku":"A1","qty":2}]],\
        ["o2",17,1795241165225,"put","Bob",18.0,true,null],\
        ["o3",30,1795241166000,"delete"]]}]}
        """

    static let answer = """
        {"batch":"0b9c6a52-5f0e-4d7a-9a43-1c2e8f6d7b10","replayed":false,\
        "results":[{"table":"orders","rows":[\
        [1,42],\
        ["o2","conflict",{"policy":"last_writer_wins","winner":"server","version":40,\
        "server":["o2",40,1795241170000,false,"Bob",20.0,true,null]}],\
        [1,43]]}],\
        "changes":[{"table":"orders","columns":["customer","total","paid","items"],\
        "since":39,"version":43,"more":false,\
        "rows":[["o2",40,1795241170000,false,"Bob",20.0,true,null],["o9",41,1795241168000,true]]}]}
        """

    /// The cloud at version 41: 39 earlier changes (o2 at 17, o3 at 30), then gateway B's o2
    /// (version 40) and its delete of o9 (version 41).
    static func exampleCloud() async throws -> SQLiteCloudStore {
        let cloud = try openCloud(tables: [exampleOrders, telemetry])
        let earlier = (1...39).map { version -> BatchRequest.Change in
            let id = version == 17 ? "o2" : version == 30 ? "o3" : "f\(version)"
            return cloudPut(id, at: 1_795_241_100_000, [.string("earlier \(version)"), nil, nil, nil])
        }
        _ = try await cloud.send(
            cloudBatch(
                "earlier", gateway: "gateway-c", replica: "replica-c1",
                [cloudSection("orders", ["customer", "total", "paid", "items"], earlier)]))
        _ = try await cloud.send(
            cloudBatch(
                "from-b", gateway: "gateway-b", replica: "replica-b1",
                [
                    cloudSection(
                        "orders", ["customer", "total", "paid", "items"],
                        [
                            cloudPut("o2", base: 17, at: 1_795_241_170_000, ["Bob", 20.0, true, nil]),
                            cloudDelete("o9", at: 1_795_241_168_000),
                        ])
                ]))
        #expect(cloud.versions["orders"] == 41)
        #expect(cloud.versions["telemetry"] == 0)
        return cloud
    }

    @Test func theCloudAnswersTheDocumentedRequestWithTheDocumentedAnswer() async throws {
        let cloud = try await Self.exampleCloud()
        let request = try BatchRequest.decode(JSONParser.parse(Self.request), maxRows: 10_000)
        let answer = try await cloud.apply(
            request, fingerprint: Fingerprint.of(Array(Self.request.utf8)), pageRows: 1_000, now: 1)
        #expect(String(decoding: answer.encode(), as: UTF8.self) == Self.answer)
    }

    @Test func theReplicaSendsTheDocumentedRequestAndEndsInTheDocumentedState() async throws {
        let cloud = try await Self.exampleCloud()
        let clock = FixedClock(1_795_241_150_000)
        let replica = try ReplicaStore.open(
            directory: temporaryDirectory(), tables: [Self.exampleOrders, Self.telemetry], now: { clock.now })

        // A holds o2 at version 17 and o3 at version 30, and its orders cursor is 39.
        _ = try await replica.applyChanges([
            ChangePage(
                table: "orders", columns: ["customer", "total", "paid", "items"], since: 0, version: 39, more: false,
                rows: [
                    .init(id: "o2", version: 17, updatedAt: 1_795_241_100_000, deleted: false, values: ["Bob", 15.0, false, nil]),
                    .init(id: "o3", version: 30, updatedAt: 1_795_241_100_000, deleted: false, values: ["Cy", 1.0, true, nil]),
                ])
        ])
        clock.advance(10_000)
        let o1 = try await replica.write(
            put("o1", [(0, .text("Ada")), (1, .real(12.5)), (2, .boolean(false)), (3, .json(#"[{"sku":"A1","qty":2}]"#))]),
            table: "orders")
        clock.advance(5_225)
        _ = try await replica.write(put("o2", [(0, .text("Bob")), (1, .real(18)), (2, .boolean(true))]), table: "orders")
        clock.advance(775)
        _ = try await replica.write(delete("o3"), table: "orders")

        let batch = try #require(try await replica.nextBatch(gateway: "gateway-a", maxRows: 1_000))
        let expectedBody = Self.request
            .replacingOccurrences(of: Self.batchID, with: batch.batchID)
            .replacingOccurrences(of: #""replica-a1""#, with: "\"\(replica.replicaID)\"")
        #expect(String(decoding: batch.body, as: UTF8.self) == expectedBody)

        let answer = try await cloud.apply(
            try sentRequest(batch), fingerprint: Fingerprint.of(batch.body), pageRows: 1_000, now: 1)
        #expect(
            String(decoding: answer.encode(), as: UTF8.self)
                == Self.answer.replacingOccurrences(of: Self.batchID, with: batch.batchID))

        let report = try await replica.applyAnswer(answer)
        #expect(report.accepted == 2)
        #expect(report.conflicts == 1)
        // The page's copy of o2 is skipped (local version 40 ≥ 40); only o9 is new.
        #expect(report.received == 1)

        let stored1 = try #require(try await replica.row(table: "orders", id: "o1"))
        #expect(stored1.version == 42)
        #expect(stored1.values == o1.values)
        let stored2 = try #require(try await replica.row(table: "orders", id: "o2"))
        #expect(stored2.version == 40)
        #expect(stored2.updatedAt == 1_795_241_170_000)
        #expect(stored2.values == [.text("Bob"), .real(20), .boolean(true), .null])
        let stored3 = try #require(try await replica.row(table: "orders", id: "o3"))
        #expect(stored3.deleted)
        #expect(stored3.version == 43)
        let stored9 = try #require(try await replica.row(table: "orders", id: "o9"))
        #expect(stored9.deleted)
        #expect(stored9.version == 41)
        #expect(stored9.updatedAt == 1_795_241_168_000)

        #expect(try await replica.cloudCursors() == TableVersions([("orders", 43), ("telemetry", 0)]))
        #expect(try await replica.outboxEntries(table: "orders").isEmpty)
        #expect(try await replica.nextBatch(gateway: "gateway-a", maxRows: 1_000)?.batchID == nil)
        let logged = try await replica.conflicts(table: "orders", includeResolved: true, limit: 10)
        #expect(logged.map(\.id) == ["o2"])
        #expect(logged.first?.status == .resolved)
    }
}
