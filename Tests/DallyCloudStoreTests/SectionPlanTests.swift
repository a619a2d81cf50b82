@testable import DallyCloudPostgres
import DallyCore
import DallySync
import DallyTestSupport
import Testing

/// The PostgreSQL store rules on a batch before it holds the table's counter and numbers the
/// writes after: the two halves must give what ruling and numbering together would.
@Suite("PostgreSQL store: a section ruled before the lock, numbered after")
struct SectionPlanTests {
    let schema = serverWinsTable

    func plan(
        _ section: BatchRequest.Section, rows: inout [String: SectionPlan.Row], writes: inout Int,
        policy: ConflictPolicy = .serverWins
    ) throws -> SectionPlan {
        let layout = try section.layout(in: schema).get()
        let decoded = section.changes.map { DecodedChange.decode($0, columns: layout.columns, collectingObjects: false) }
        return SectionPlan(
            section, decoded, rows: &rows, writes: &writes, held: [], origin: "gw-a/rep-a", batchID: "b9",
            policy: policy, positions: layout.positions)
    }

    func row(version: Int64, origin: String = "gw-b/rep-b", batch: String = "b1", values: [JSONValue]) -> SectionPlan.Row {
        SectionPlan.Row(
            facts: .init(version: version, updatedAt: 1_000, origin: origin, batch: batch), deleted: false, values: values)
    }

    @Test func writesTakeTheVersionsAfterTheLockedCounterInTheirOrder() throws {
        var rows = [
            "moved": row(version: 7, values: ["theirs", 1]),
            "retried": row(version: 5, origin: "gw-a/rep-a", batch: "b9", values: ["mine", 2]),
        ]
        var writes = 0
        let section = cloudSection(
            "sw", ["body"],
            [
                cloudPut("new", ["a"]), cloudPut("moved", base: 6, ["b"]), cloudPut("retried", ["c"]),
                cloudPut("bad id!", ["d"]), cloudDelete("gone"),
            ])
        let planned = try plan(section, rows: &rows, writes: &writes)
        #expect(writes == 2)

        var version: Int64 = 40
        var written: [Int64] = []
        let (results, toWrite) = planned.assign(policy: .serverWins, version: &version, writeVersions: &written)
        #expect(version == 42)
        #expect(written == [41, 42])
        #expect(toWrite.map(\.version) == [41, 42])
        #expect(toWrite.map(\.decoded.change.id) == ["new", "gone"])
        let server = ChangePage.ChangedRow(id: "moved", version: 7, updatedAt: 1_000, deleted: false, values: ["theirs"])
        #expect(results.count == 5)
        #expect(results[0] == .accepted(id: "new", version: 41))
        #expect(results[1] == .conflict(id: "moved", .init(policy: .serverWins, winner: .server, version: 7, server: server)))
        #expect(results[2] == .accepted(id: "retried", version: 5))
        guard case .rejected(let id, _) = results[3] else {
            Issue.record("an invalid id is rejected, got \(results[3])")
            return
        }
        #expect(id == "bad id!")
        #expect(results[4] == .accepted(id: "gone", version: 42))
    }

    @Test func aRowAnEarlierSectionWroteIsAnsweredWithThatWritesVersion() throws {
        var rows: [String: SectionPlan.Row] = [:]
        var writes = 0
        let first = try plan(cloudSection("sw", ["body"], [cloudPut("a", ["x"]), cloudPut("b", ["y"])]), rows: &rows, writes: &writes)
        let second = try plan(cloudSection("sw", ["n"], [cloudPut("b", [3]), cloudPut("c", [4])]), rows: &rows, writes: &writes)
        #expect(writes == 3)

        var version: Int64 = 10
        var written: [Int64] = []
        let one = first.assign(policy: .serverWins, version: &version, writeVersions: &written)
        let two = second.assign(policy: .serverWins, version: &version, writeVersions: &written)
        #expect(one.results == [.accepted(id: "a", version: 11), .accepted(id: "b", version: 12)])
        #expect(two.results == [.accepted(id: "b", version: 12), .accepted(id: "c", version: 13)])
        #expect(two.writes.map(\.decoded.change.id) == ["c"])
    }

    @Test func aClientThatWinsAConflictTakesTheNextVersion() throws {
        var rows = ["r": row(version: 3, values: ["theirs", 1])]
        var writes = 0
        let planned = try plan(
            cloudSection("sw", ["body", "n"], [cloudPut("r", base: 2, ["mine", 2])]), rows: &rows, writes: &writes,
            policy: .clientWins)
        var version: Int64 = 3
        var written: [Int64] = []
        let (results, toWrite) = planned.assign(policy: .clientWins, version: &version, writeVersions: &written)
        let server = ChangePage.ChangedRow(id: "r", version: 3, updatedAt: 1_000, deleted: false, values: ["theirs", 1])
        #expect(results == [.conflict(id: "r", .init(policy: .clientWins, winner: .client, version: 4, server: server))])
        #expect(toWrite.map(\.version) == [4])
    }
}
