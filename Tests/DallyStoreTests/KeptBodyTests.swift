import DallyCore
import DallySync
import Foundation
import GRDB
import Testing

import DallyTestSupport
@testable import DallyStore

@Suite("KeptBody: a batch in flight kept compressed in the replica")
struct KeptBodyTests {
    let json = Array(
        (#"{"batch_id":"b1","sections":[{"table":"orders","changes":["#
            + (0..<500).map { #"["order-\#($0)",null,1000000,false,["Ada",\#($0)]]"# }.joined(separator: ",") + "]}]}")
            .utf8)

    @Test func aBodyIsKeptAsOneZstdFrameAndReadBackWhole() throws {
        let kept = KeptBody.packed(json)
        #expect(kept.starts(with: KeptBody.magic))
        #expect(kept.count < json.count / 4)
        #expect(try KeptBody.unpacked(kept) == json)
    }

    @Test func aBodyKeptAsJSONByAnOlderReplicaIsReadAsItIs() throws {
        #expect(try KeptBody.unpacked(json) == json)
        #expect(try KeptBody.unpacked([]) == [])
    }

    @Test func aDamagedFrameIsAnErrorThatSaysSo() {
        var kept = KeptBody.packed(json)
        kept.removeLast(kept.count / 2)
        #expect {
            try KeptBody.unpacked(kept)
        } throws: { error in
            "\(error)".contains("does not decode")
        }
    }

    @Test func theReplicaKeepsTheFrameAndResendsTheSameBytesAfterARestart() async throws {
        let directory = temporaryDirectory()
        let store = try ReplicaStore.open(directory: directory, tables: [orders], now: { 1_000_000 })
        for n in 0..<200 {
            _ = try await store.write(put("o\(n)", [(0, .text("customer \(n)")), (1, .real(12.5))]), table: "orders")
        }
        let batch = try #require(try await store.nextBatch(gateway: "gw", maxRows: 500))
        let kept = try #require(
            try await store.pool.read { db in try Data.fetchOne(db, sql: "SELECT body FROM dally_inflight") })
        #expect(Array(kept).starts(with: KeptBody.magic))
        #expect(kept.count < batch.body.count / 2)
        try store.close()

        let reopened = try ReplicaStore.open(directory: directory, tables: [orders], now: { 2_000_000 })
        let again = try #require(try await reopened.nextBatch(gateway: "gw", maxRows: 500))
        #expect(again.resent)
        #expect(again.batchID == batch.batchID)
        #expect(again.body == batch.body)
        try reopened.close()
    }
}
