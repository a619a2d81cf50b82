import DallyCore
import DallySync
import Testing

@testable import DallyStore

/// Columns added to a table the replica holds rows of are filled from the cloud before the
/// table's changes go up (``ColumnFill``).
@Suite("Columns added to a table: filled from the cloud")
struct ColumnFillTests {
    let directory = temporaryDirectory()
    static let before = table("items", [("name", .text)])
    static let after = table("items", [("name", .text), ("note", .text)])

    func open(_ schema: TableSchema, in directory: String? = nil) throws -> ReplicaStore {
        try ReplicaStore.open(directory: directory ?? self.directory, tables: [schema], now: { 1_000 })
    }

    static func row(_ id: String, version: Int64, at updatedAt: Int64 = 5, _ name: String, _ note: JSONValue)
        -> ChangePage.ChangedRow
    {
        ChangePage.ChangedRow(id: id, version: version, updatedAt: updatedAt, deleted: false, values: [.string(name), note])
    }

    static func page(since: Int64 = 0, version: Int64, more: Bool = false, _ rows: [ChangePage.ChangedRow]) -> ChangePage {
        ChangePage(table: "items", columns: ["name", "note"], since: since, version: version, more: more, rows: rows)
    }

    /// A replica of `before` holding a, b, c clean (pulled while the cloud already had `note`)
    /// and d with a local change, closed.
    func seeded() async throws {
        let store = try open(Self.before)
        _ = try await store.applyChanges([
            Self.page(version: 4, [
                Self.row("a", version: 1, "A", "note a"), Self.row("b", version: 2, "B", .null),
                Self.row("c", version: 3, "C", "note c"), Self.row("d", version: 4, at: 7, "D", "note d"),
            ])
        ])
        _ = try await store.write(patch("d", [(0, .text("D, local"))]), table: "items")
        try store.close()
    }

    @Test func oldRowsTakeTheCloudsValuesAndTheTablesChangesWaitUntilThen() async throws {
        try await seeded()
        let store = try open(Self.after)
        #expect(try await store.fillingTables() == ["items"])
        #expect(try await store.cloudCursors() == TableVersions([("items", 0)]))
        #expect(try await store.row(table: "items", id: "a")?.values == [.text("A"), .null])

        // Written while the fill waits: a change that names the new column keeps its value.
        _ = try await store.write(patch("c", [(1, .text("mine"))]), table: "items")
        #expect(try await store.nextBatch(gateway: "gw", maxRows: 10) == nil)
        #expect(try await store.syncBacklog().outbox.isEmpty)
        #expect(try await store.outboxEntries(table: "items").map(\.rowID).sorted() == ["c", "d"])

        // The pull from scratch, in two pages; a stop between them keeps the fill going.
        _ = try await store.applyChanges(
            [Self.page(version: 2, more: true, [Self.row("a", version: 1, "A", "note a"), Self.row("b", version: 2, "B", .null)])],
            pulled: ["items"])
        let seqOfB = try #require(try await store.row(table: "items", id: "b")?.seq)
        try store.close()
        let reopened = try open(Self.after)
        #expect(try await reopened.fillingTables() == ["items"])
        #expect(try await reopened.row(table: "items", id: "a")?.values == [.text("A"), .text("note a")])
        #expect(try await reopened.row(table: "items", id: "a")?.version == 1)
        // Nothing differed: the row was not written again.
        #expect(try await reopened.row(table: "items", id: "b")?.seq == seqOfB)

        _ = try await reopened.applyChanges(
            [Self.page(since: 2, version: 4, [Self.row("c", version: 3, "C", "note c"), Self.row("d", version: 4, at: 7, "D", "note d")])],
            pulled: ["items"])
        #expect(try await reopened.fillingTables().isEmpty)
        #expect(try await reopened.row(table: "items", id: "c")?.values == [.text("C"), .text("mine")])
        let d = try #require(try await reopened.row(table: "items", id: "d"))
        #expect(d.values == [.text("D, local"), .text("note d")])
        #expect(d.version == nil)

        // The held changes go up now, with the values filled in.
        let batch = try #require(try await reopened.nextBatch(gateway: "gw", maxRows: 10))
        let section = try #require(try sentRequest(batch).sections.first)
        #expect(section.columns == ["name", "note"])
        let sent = Dictionary(uniqueKeysWithValues: section.changes.map { ($0.id, $0) })
        #expect(sent["d"]?.values == [.string("D, local"), .string("note d")])
        #expect(sent["d"]?.baseVersion == 4)
        #expect(sent["c"]?.values == [.string("C"), .string("mine")])
        #expect(try await reopened.lifecycle()["items"]?.resyncs ?? 0 == 0)
    }

    @Test func aTableWithNoRowsOrNoDownloadsIsNotPulledAgain() async throws {
        let elsewhere = temporaryDirectory()
        try open(Self.before, in: elsewhere).close()
        let empty = try open(Self.after, in: elsewhere)
        #expect(try await empty.fillingTables().isEmpty)
        try empty.close()

        try await seeded()
        let upload = Self.after.policy.uploadRows
        let uploadOnly = TableSchema(
            name: "items", columns: Self.after.columns, conflict: .lastWriterWins,
            policy: SyncPolicy(
                localOnly: false, atomicSync: false, uploadRows: upload, uploadObjects: upload,
                downloadRows: DownloadPolicy(period: .seconds(60), networks: []), downloadObjects: Self.after.policy.downloadObjects))
        let store = try open(uploadOnly)
        #expect(try await store.fillingTables().isEmpty)
        #expect(try await store.nextBatch(gateway: "gw", maxRows: 10) != nil)
    }
}
