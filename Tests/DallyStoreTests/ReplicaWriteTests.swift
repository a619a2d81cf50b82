import DallyCore
import Testing

@testable import DallyStore

@Suite("Replica writes")
struct ReplicaWriteTests {
    let clock = FixedClock(1_000_000)
    let store: ReplicaStore

    init() throws {
        let clock = self.clock
        store = try ReplicaStore.open(directory: temporaryDirectory(), tables: [orders, notes], now: { clock.now })
    }

    @Test func theWriterHasALargerPageCacheThanTheReaders() async throws {
        let writer = try await store.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA cache_size") }
        let reader = try await store.pool.read { db in try Int.fetchOne(db, sql: "PRAGMA cache_size") }
        #expect(writer == -ReplicaStore.writerCacheKiB)
        #expect(reader == -2000)
    }

    @Test func putStoresTheRowWithANewSequenceAndAnOutboxEntry() async throws {
        let row = try await store.write(put("o1", [(0, .text("Ada")), (1, .real(12.5))]), table: "orders")
        #expect(row.seq == 1)
        #expect(row.version == nil)
        #expect(row.updatedAt == 1_000_000)
        #expect(row.values == [.text("Ada"), .real(12.5), .null])

        let read = try await store.row(table: "orders", id: "o1")
        #expect(read == row)
        let outbox = try await store.outboxEntries(table: "orders")
        #expect(outbox == [Outbox.Entry(table: "orders", rowID: "o1", firstDirtyAt: 1_000_000, lastWriteAt: 1_000_000, baseVersion: nil, writes: 1)])
        #expect(store.lastSeq == 1)
        #expect(store.counts["orders"] == TableCounts(live: 1, tombstones: 0, writes: 1, coalesced: 0))
    }

    @Test func laterWritesCoalesceIntoOneOutboxEntryKeepingTheFirstDirtyTime() async throws {
        _ = try await store.write(put("o1", [(0, .text("Ada"))]), table: "orders")
        clock.advance(5_000)
        _ = try await store.write(patch("o1", [(2, .boolean(true))]), table: "orders")
        clock.advance(5_000)
        let last = try await store.write(patch("o1", [(1, .real(3))]), table: "orders")

        #expect(last.seq == 3)
        #expect(last.values == [.text("Ada"), .real(3), .boolean(true)])
        let outbox = try await store.outboxEntries(table: "orders")
        #expect(outbox.count == 1)
        #expect(outbox.first?.firstDirtyAt == 1_000_000)
        #expect(outbox.first?.lastWriteAt == 1_010_000)
        #expect(outbox.first?.writes == 3)
        #expect(store.counts["orders"]?.coalesced == 2)
    }

    @Test func patchAndDeleteOfAMissingRowAreRefusedAndChangeNothing() async throws {
        await #expect(throws: DallyError.self) { try await store.write(patch("nope", [(0, .text("x"))]), table: "orders") }
        await #expect(throws: DallyError.self) { try await store.write(delete("nope"), table: "orders") }
        #expect(store.lastSeq == 0)
        #expect(try await store.outboxEntries(table: "orders").isEmpty)
    }

    @Test func deleteLeavesATombstoneAndASecondDeleteChangesNothing() async throws {
        _ = try await store.write(put("o1", [(0, .text("Ada"))]), table: "orders")
        let tombstone = try await store.write(delete("o1"), table: "orders")
        #expect(tombstone.deleted)
        #expect(tombstone.values == [.null, .null, .null])
        let again = try await store.write(delete("o1"), table: "orders")
        #expect(again.seq == tombstone.seq)
        #expect(store.lastSeq == 2)
        #expect(store.counts["orders"] == TableCounts(live: 0, tombstones: 1, writes: 2, coalesced: 1))
    }

    @Test func aStaleExpectedSequenceIsRefusedWithTheCurrentRow() async throws {
        let first = try await store.write(put("o1", [(0, .text("Ada"))]), table: "orders")
        let second = try await store.write(put("o1", [(0, .text("Bea"))], expectedSeq: first.seq), table: "orders")
        do {
            _ = try await store.write(put("o1", [(0, .text("Cy"))], expectedSeq: first.seq), table: "orders")
            Issue.record("a stale expected_seq was accepted")
        } catch let error as DallyError {
            #expect(error.code == .versionMismatch)
            #expect(error.current == second)
        }
        #expect(try await store.row(table: "orders", id: "o1") == second)
    }

    @Test func expectedSequenceZeroMeansCreateOnly() async throws {
        _ = try await store.write(put("o1", [], expectedSeq: 0), table: "orders")
        await #expect(throws: DallyError.self) { try await store.write(put("o1", [], expectedSeq: 0), table: "orders") }
    }

    @Test func concurrentWritersShareGroupCommitsAndGetDistinctSequences() async throws {
        let store = self.store
        let seqs = try await withThrowingTaskGroup(of: Int64.self) { group in
            for i in 0..<200 {
                group.addTask { try await store.write(put("r\(i)", [(0, .text("n\(i)"))]), table: "notes").seq }
            }
            return try await group.reduce(into: [Int64]()) { $0.append($1) }
        }
        #expect(Set(seqs) == Set(1...200))
        #expect(store.lastSeq == 200)
        #expect(store.counts["notes"]?.live == 200)
    }

    @Test func oneFailingWriteInAGroupDoesNotFailTheOthers() async throws {
        let store = self.store
        _ = try await store.write(put("x", []), table: "notes")
        let results = await withTaskGroup(of: Bool.self) { group in
            for i in 0..<50 {
                group.addTask {
                    // Every fifth write expects a sequence the row does not have.
                    let write = put(i % 5 == 0 ? "x" : "ok\(i)", [], expectedSeq: i % 5 == 0 ? 999 : nil)
                    return (try? await store.write(write, table: "notes")) != nil
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.filter { $0 }.count == 40)
        #expect(store.counts["notes"]?.live == 41)
    }

    @Test func batchSavesValidRowsAndReportsRefusedOnes() async throws {
        let outcome = try await store.writeBatch(
            [put("a", [(0, .text("x"))]), patch("missing", [(0, .text("y"))]), put("b", [])],
            table: "orders", allOrNothing: false)
        #expect(outcome.saved == ["a", "b"])
        #expect(outcome.errors.map(\.id) == ["missing"])
        #expect(outcome.errors.first?.error.code == .notFound)
        #expect(outcome.lastSeq == 2)
    }

    @Test func allOrNothingBatchSavesNothingWhenOneRowIsRefused() async throws {
        let outcome = try await store.writeBatch(
            [put("a", []), patch("missing", [(0, .text("y"))])], table: "orders", allOrNothing: true)
        #expect(outcome.saved.isEmpty)
        #expect(outcome.errors.count == 1)
        #expect(try await store.row(table: "orders", id: "a") == nil)
        #expect(store.lastSeq == 0)
    }

    @Test func localOnlyTablesKeepNoOutbox() async throws {
        let scratch = table("scratch", [("note", .text)], localOnly: true)
        let store = try ReplicaStore.open(directory: temporaryDirectory(), tables: [scratch])
        _ = try await store.write(put("s1", [(0, .text("x"))]), table: "scratch")
        #expect(try await store.outboxEntries(table: "scratch").isEmpty)
    }

    @Test func unknownTableIsRefused() async throws {
        await #expect(throws: DallyError.self) { try await store.write(put("a", []), table: "nope") }
    }
}
