import DallyCore
import DallySync
import DallyTestSupport
import Testing

@testable import DallyCloudStore

/// Gateway A creates row `r` (version 1); gateway B changes it (version 2, written at 2,000);
/// then A sends a change still based on version 1.
@Suite("Cloud store: conflicts under each policy")
struct CloudStoreConflictTests {
    /// Sets the stage in `table` and returns the answer to A's stale change, written at `updatedAt`.
    /// A's section names the columns in the reverse of the schema's order.
    func staleChange(_ cloud: any CloudStore, _ table: String, updatedAt: Int64, deleted: Bool = false) async throws -> BatchAnswer {
        let created = try await cloud.send(
            cloudBatch("a1", [cloudSection(table, ["body", "n"], [cloudPut("r", at: 1_000, ["from A", 1])])]))
        #expect(created.allRows == [.accepted(id: "r", version: 1)])
        let moved = try await cloud.send(
            cloudBatch(
                "b1", gateway: "gw-b", replica: "rep-b",
                [cloudSection(table, ["body", "n"], [cloudPut("r", base: 1, at: 2_000, ["from B", 2])])]))
        #expect(moved.allRows == [.accepted(id: "r", version: 2)])
        let change = deleted ? cloudDelete("r", base: 1, at: updatedAt) : cloudPut("r", base: 1, at: updatedAt, [3, "A again"])
        return try await cloud.send(cloudBatch("a2", [cloudSection(table, ["n", "body"], [change])]))
    }

    /// B's row as the conflict reports it: values in A's section order (`n`, `body`).
    static let serverRow = ChangePage.ChangedRow(id: "r", version: 2, updatedAt: 2_000, deleted: false, values: [2, "from B"])

    func storedRow(_ cloud: any CloudStore, _ table: String) async throws -> ChangePage.ChangedRow? {
        try await cloud.allChanges(table).first { $0.id == "r" }
    }

    @Test(arguments: Backend.allCases) func serverWinsKeepsTheCloudRowAndSendsItBack(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend)
        defer { try? cloud.close() }
        let answer = try await staleChange(cloud, "sw", updatedAt: 9_000)
        #expect(
            answer.allRows == [
                .conflict(id: "r", .init(policy: .serverWins, winner: .server, version: 2, server: Self.serverRow))
            ])
        #expect(cloud.versions["sw"] == 2)
        #expect(try await storedRow(cloud, "sw") == ChangePage.ChangedRow(id: "r", version: 2, updatedAt: 2_000, deleted: false, values: ["from B", 2]))
    }

    @Test(arguments: Backend.allCases) func clientWinsAppliesTheChangeUnderANewVersion(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend)
        defer { try? cloud.close() }
        let answer = try await staleChange(cloud, "cw", updatedAt: 500)
        #expect(
            answer.allRows == [
                .conflict(id: "r", .init(policy: .clientWins, winner: .client, version: 3, server: Self.serverRow))
            ])
        #expect(cloud.versions["cw"] == 3)
        #expect(try await storedRow(cloud, "cw") == ChangePage.ChangedRow(id: "r", version: 3, updatedAt: 500, deleted: false, values: ["A again", 3]))
    }

    @Test(arguments: Backend.allCases) func clientWinsAppliesADeleteToo(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend)
        defer { try? cloud.close() }
        let answer = try await staleChange(cloud, "cw", updatedAt: 500, deleted: true)
        #expect(
            answer.allRows == [
                .conflict(id: "r", .init(policy: .clientWins, winner: .client, version: 3, server: Self.serverRow))
            ])
        #expect(try await storedRow(cloud, "cw") == ChangePage.ChangedRow(id: "r", version: 3, updatedAt: 500, deleted: true, values: []))
    }

    @Test(arguments: Backend.allCases) func lastWriterWinsAppliesALaterChange(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend)
        defer { try? cloud.close() }
        let answer = try await staleChange(cloud, "lww", updatedAt: 2_001)
        #expect(
            answer.allRows == [
                .conflict(id: "r", .init(policy: .lastWriterWins, winner: .client, version: 3, server: Self.serverRow))
            ])
        #expect(cloud.versions["lww"] == 3)
        #expect(try await storedRow(cloud, "lww")?.values == ["A again", 3])
    }

    @Test(arguments: Backend.allCases, [Int64(1_999), 2_000])
    func lastWriterWinsKeepsTheCloudRowOverAnEarlierOrTiedChange(_ backend: Backend, _ updatedAt: Int64) async throws {
        let cloud = try await openCloud(backend)
        defer { try? cloud.close() }
        let answer = try await staleChange(cloud, "lww", updatedAt: updatedAt)
        #expect(
            answer.allRows == [
                .conflict(id: "r", .init(policy: .lastWriterWins, winner: .server, version: 2, server: Self.serverRow))
            ])
        #expect(cloud.versions["lww"] == 2)
        #expect(try await storedRow(cloud, "lww")?.values == ["from B", 2])
    }

    @Test(arguments: Backend.allCases) func manualKeepsTheCloudRowAndNamesNoWinner(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend)
        defer { try? cloud.close() }
        let answer = try await staleChange(cloud, "man", updatedAt: 9_000)
        #expect(
            answer.allRows == [.conflict(id: "r", .init(policy: .manual, winner: .none, version: 2, server: Self.serverRow))])
        #expect(cloud.versions["man"] == 2)
        #expect(try await storedRow(cloud, "man")?.values == ["from B", 2])
    }

    @Test(arguments: Backend.allCases) func aConflictWithATombstoneReportsItWithoutValues(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend)
        defer { try? cloud.close() }
        _ = try await cloud.send(cloudBatch("a1", [cloudSection("sw", ["body", "n"], [cloudPut("r", ["from A", 1])])]))
        _ = try await cloud.send(
            cloudBatch("b1", gateway: "gw-b", replica: "rep-b", [cloudSection("sw", ["body", "n"], [cloudDelete("r", base: 1, at: 2_000)])]))
        let answer = try await cloud.send(cloudBatch("a2", [cloudSection("sw", ["body", "n"], [cloudPut("r", base: 1, ["A", 3])])]))
        #expect(
            answer.allRows == [
                .conflict(
                    id: "r",
                    .init(
                        policy: .serverWins, winner: .server, version: 2,
                        server: .init(id: "r", version: 2, updatedAt: 2_000, deleted: true, values: [])))
            ])
    }

    @Test(arguments: Backend.allCases) func aChangeBasedOnTheCurrentVersionIsNoConflictUnderAnyPolicy(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend)
        defer { try? cloud.close() }
        for table in ["sw", "cw", "lww", "man"] {
            _ = try await cloud.send(cloudBatch("\(table)-1", [cloudSection(table, ["body"], [cloudPut("r", ["one"])])]))
            let answer = try await cloud.send(
                cloudBatch("\(table)-2", gateway: "gw-b", replica: "rep-b", [cloudSection(table, ["body"], [cloudPut("r", base: 1, at: 1, ["two"])])]))
            #expect(answer.allRows == [.accepted(id: "r", version: 2)], "\(table)")
        }
    }
}
