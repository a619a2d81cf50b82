import DallyCore
import Testing

@testable import DallyGateway

@Suite("TinySync answer selection")
struct TinySyncSelectionTests {
    func row(_ id: String, _ seq: Int64, deleted: Bool = false) -> StoredRow {
        StoredRow(id: id, seq: seq, updatedAt: 5, deleted: deleted, version: nil, values: [])
    }

    @Test func ownWritesAreLeftOutUnlessChangedSince() {
        let selection = TinySyncSelection(
            fetched: [[row("a", 3), row("b", 4)], [row("c", 5)]], through: 9, cap: 100,
            ownWrites: [.init(entity: 0, id: "a", seq: 3), .init(entity: 1, id: "c", seq: 2)])
        #expect(selection.rows.map { $0.map(\.id) } == [["b"], ["c"]])
        #expect(selection.through == 9)
    }

    @Test func aFullAnswerStopsAtASequenceBoundaryAcrossEntities() {
        let selection = TinySyncSelection(
            fetched: [[row("a", 1), row("b", 4), row("c", 6)], [row("x", 2), row("y", 3), row("z", 7)]], through: 9,
            cap: 3, ownWrites: [])
        #expect(selection.rows.map { $0.map(\.id) } == [["a"], ["x", "y"]])
        // The mark records 3: the next sync resumes with b, c and z.
        #expect(selection.through == 3)
    }
}
