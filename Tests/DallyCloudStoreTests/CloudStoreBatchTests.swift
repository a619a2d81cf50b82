import DallyCore
import DallySync
import DallyTestSupport
import Testing

import DallyStore


@Suite("Cloud store: batches, versions, retries")
struct CloudStoreBatchTests {
    @Test(arguments: Backend.allCases) func everyAcceptedChangeTakesTheNextVersionOfItsOwnTable(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend)
        defer { try? cloud.close() }
        let recorder = CommitRecorder()
        cloud.observeCommits { recorder.record($0) }
        #expect(cloud.versions == ["orders": 0, "notes": 0, "sw": 0, "cw": 0, "lww": 0, "man": 0])

        let first = try await cloud.send(
            cloudBatch(
                "b1",
                [
                    cloudSection(
                        "orders", ["customer", "total", "paid"],
                        [cloudPut("o1", ["Ada", 12.5, true]), cloudPut("o2", ["Bea", 1, false]), cloudPut("o3", [nil, nil, nil])]),
                    cloudSection("notes", ["body"], [cloudPut("n1", ["hello"])]),
                ]))
        #expect(first.batchID == "b1")
        #expect(!first.replayed)
        #expect(
            first.results == [
                .init(table: "orders", rows: [.accepted(id: "o1", version: 1), .accepted(id: "o2", version: 2), .accepted(id: "o3", version: 3)]),
                .init(table: "notes", rows: [.accepted(id: "n1", version: 1)]),
            ])
        #expect(cloud.versions["orders"] == 3)
        #expect(cloud.versions["notes"] == 1)

        let second = try await cloud.send(
            cloudBatch(
                "b2",
                [cloudSection("orders", ["customer"], [cloudPut("o1", base: 1, ["Ada L."]), cloudPut("o4", ["Cy"])])]))
        #expect(second.allRows == [.accepted(id: "o1", version: 4), .accepted(id: "o4", version: 5)])
        #expect(cloud.versions["orders"] == 5)
        #expect(cloud.versions["notes"] == 1)
        #expect(cloud.versions["sw"] == 0)

        // Observers hear of the tables each commit moved, and only those.
        #expect(recorder.recorded == [["orders": 3, "notes": 1], ["orders": 5]])

        // Version order: o1 moved to the end; a section naming only some columns leaves the others.
        let page = try await cloud.changes(table: "orders", since: 0, limit: 10, excludingReplica: nil)
        #expect(page.rows.map(\.id) == ["o2", "o3", "o1", "o4"])
        #expect(page.rows.map(\.version) == [2, 3, 4, 5])
        #expect(page.rows[2].values == ["Ada L.", 12.5, true])
        #expect(page.rows[3].values == ["Cy", nil, nil])
        #expect(page.columns == ["customer", "total", "paid"])
        #expect(page.version == 5)
        #expect(!page.more)
    }

    /// A JSON column keeps the numbers it was sent as they were written: an integer beyond 64
    /// bits and a decimal with more digits than a Double keeps come back digit for digit.
    @Test(arguments: Backend.allCases) func aJSONColumnsNumbersAreKeptDigitForDigit(_ backend: Backend) async throws {
        let documents = table("documents", [("doc", .json)])
        let cloud = try await openCloud(backend, tables: cloudTables + [documents])
        defer { try? cloud.close() }
        let text = #"{"id":18446744073709551615,"amounts":[0.12345678901234567891,-98765432109876543210,2.5]}"#
        let doc = try JSONParser.parse(text)
        _ = try await cloud.send(cloudBatch("b1", [cloudSection("documents", ["doc"], [cloudPut("d1", [doc])])]))
        let page = try await cloud.changes(table: "documents", since: 0, limit: 10, excludingReplica: nil)
        #expect(page.rows.first?.values == [doc])
        #expect(page.rows.first?.values.first?.jsonText == text)
    }

    @Test(arguments: Backend.allCases) func theSameBatchTwiceIsAnsweredFromTheRecordAndChangesNothing(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend)
        defer { try? cloud.close() }
        let batch = cloudBatch(
            "retry-me",
            [
                cloudSection("orders", ["customer"], [cloudPut("o1", ["Ada"]), cloudDelete("o2")]),
                cloudSection("nope", ["x"], [cloudPut("z", [1])]),
            ])
        let first = try await cloud.send(batch, now: 10)
        let before = try await cloud.allChanges("orders")
        let recorder = CommitRecorder()
        cloud.observeCommits { recorder.record($0) }

        let second = try await cloud.send(batch, now: 20)
        #expect(second.replayed)
        #expect(!first.replayed)
        #expect(second.results == first.results)
        #expect(second.batchID == "retry-me")
        #expect(cloud.versions["orders"] == 2)
        #expect(try await cloud.allChanges("orders") == before)
        #expect(recorder.recorded.isEmpty)
        #expect(try await cloud.statistics().storedAnswers == 1)
    }

    @Test(arguments: Backend.allCases) func aBatchIDReusedWithADifferentBodyIsRefused(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend)
        defer { try? cloud.close() }
        _ = try await cloud.send(cloudBatch("b1", [cloudSection("notes", ["body"], [cloudPut("n1", ["one"])])]))
        let other = cloudBatch("b1", [cloudSection("notes", ["body"], [cloudPut("n1", ["two"])])])
        do {
            _ = try await cloud.send(other)
            Issue.record("a reused batch id was accepted")
        } catch let error as DallyError {
            #expect(error.code == .batchReused)
            #expect(error.message.contains("b1"))
        }
        #expect(cloud.versions["notes"] == 1)
        #expect(try await cloud.allChanges("notes").map(\.values) == [["one"]])

        // Batch ids are per gateway: another gateway may use the same one.
        let elsewhere = cloudBatch("b1", gateway: "gw-b", replica: "rep-b", [cloudSection("notes", ["body"], [cloudPut("n2", ["x"])])])
        let answer = try await cloud.send(elsewhere)
        #expect(!answer.replayed)
        #expect(answer.allRows == [.accepted(id: "n2", version: 2)])
    }

    @Test(arguments: Backend.allCases) func aRetryAfterItsAnswerWasForgottenIsRecognisedRowByRow(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend)
        defer { try? cloud.close() }
        let batch = cloudBatch(
            "b-old",
            [
                cloudSection(
                    "orders", ["customer", "total"], [cloudPut("o1", ["Ada", 1]), cloudDelete("o2"), cloudPut("o3", ["Cy", 3])]),
                cloudSection("notes", ["body"], [cloudPut("n1", ["hi"])]),
            ])
        let first = try await cloud.send(batch, now: 100)
        #expect(try await cloud.forgetAnswers(receivedBefore: 100) == 0)
        #expect(try await cloud.forgetAnswers(receivedBefore: .max) == 1)
        #expect(try await cloud.statistics().storedAnswers == 0)
        let before = try await cloud.allChanges("orders")
        let recorder = CommitRecorder()
        cloud.observeCommits { recorder.record($0) }

        let again = try await cloud.send(batch, now: 200)
        #expect(!again.replayed)
        #expect(again.results == first.results)
        #expect(
            again.allRows == [
                .accepted(id: "o1", version: 1), .accepted(id: "o2", version: 2), .accepted(id: "o3", version: 3),
                .accepted(id: "n1", version: 1),
            ])
        #expect(cloud.versions["orders"] == 3)
        #expect(cloud.versions["notes"] == 1)
        #expect(try await cloud.allChanges("orders") == before)
        #expect(recorder.recorded.isEmpty)
        // The answer is on record again for the next retry.
        #expect(try await cloud.send(batch, now: 300).replayed)
    }

    @Test(arguments: Backend.allCases) func aRetryAfterForgettingRecognisesAChangeThatWonAConflict(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend)
        defer { try? cloud.close() }
        _ = try await cloud.send(
            cloudBatch("b0", gateway: "gw-b", replica: "rep-b", [cloudSection("cw", ["body", "n"], [cloudPut("r", ["theirs", 1])])]))
        let batch = cloudBatch("a1", [cloudSection("cw", ["body", "n"], [cloudPut("r", ["mine", 2])])])
        let first = try await cloud.send(batch)
        guard case .conflict(_, let conflict) = first.allRows.first else {
            Issue.record("expected a conflict, got \(first.allRows)")
            return
        }
        #expect(conflict.winner == .client)
        #expect(conflict.version == 2)
        _ = try await cloud.forgetAnswers(receivedBefore: .max)

        let again = try await cloud.send(batch)
        #expect(again.allRows == [.accepted(id: "r", version: 2)])
        #expect(cloud.versions["cw"] == 2)
    }

    @Test(arguments: Backend.allCases) func theSameReplicaIDFromAnotherGatewayIsNotTakenForARetry(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend)
        defer { try? cloud.close() }
        _ = try await cloud.send(cloudBatch("b1", [cloudSection("cw", ["body"], [cloudPut("r", ["A"])])]))
        _ = try await cloud.forgetAnswers(receivedBefore: .max)
        // Same batch id and replica id, other gateway: a different writer, so the rules apply.
        let other = try await cloud.send(
            cloudBatch("b1", gateway: "gw-x", replica: "rep-a", [cloudSection("cw", ["body"], [cloudPut("r", ["X"])])]))
        guard case .conflict(_, let conflict) = other.allRows.first else {
            Issue.record("expected a conflict, got \(other.allRows)")
            return
        }
        #expect(conflict.winner == .client)
        #expect(try await cloud.allChanges("cw").map(\.values) == [["X", nil]])
    }

    @Test(arguments: Backend.allCases) func aRowAnotherWriterChangedSinceIsNotMistakenForARetry(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend)
        defer { try? cloud.close() }
        let batch = cloudBatch("b1", [cloudSection("sw", ["body", "n"], [cloudPut("r", ["mine", 1])])])
        _ = try await cloud.send(batch)
        _ = try await cloud.send(
            cloudBatch("x1", gateway: "gw-b", replica: "rep-b", [cloudSection("sw", ["body", "n"], [cloudPut("r", base: 1, ["theirs", 2])])]))
        _ = try await cloud.forgetAnswers(receivedBefore: .max)

        let again = try await cloud.send(batch)
        // The row is no longer the batch's own: the retry is a change created without a base,
        // and the table's policy (server_wins) keeps the other writer's row.
        guard case .conflict(_, let conflict) = again.allRows.first else {
            Issue.record("expected a conflict, got \(again.allRows)")
            return
        }
        #expect(conflict.winner == .server)
        #expect(conflict.server.values == ["theirs", 2])
        #expect(cloud.versions["sw"] == 2)
    }

    @Test(arguments: Backend.allCases) func anUnknownTableRejectsEveryRowOfItsSectionAndTheRestApplies(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend)
        defer { try? cloud.close() }
        let answer = try await cloud.send(
            cloudBatch(
                "b1",
                [
                    cloudSection("nope", ["x"], [cloudPut("a", [1]), cloudDelete("b")]),
                    cloudSection("notes", ["body"], [cloudPut("n1", ["kept"])]),
                ]))
        #expect(answer.results.map(\.table) == ["nope", "notes"])
        let rejected = answer.results[0].rows
        #expect(rejected.map(\.id) == ["a", "b"])
        for row in rejected {
            guard case .rejected(_, let rejection) = row else {
                Issue.record("expected a rejection, got \(row)")
                continue
            }
            #expect(rejection.code == "unknown_table")
            #expect(rejection.message.contains("nope"))
        }
        #expect(answer.results[1].rows == [.accepted(id: "n1", version: 1)])
    }

    @Test(arguments: Backend.allCases) func anUnknownColumnRejectsEveryRowOfItsSection(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend)
        defer { try? cloud.close() }
        let answer = try await cloud.send(
            cloudBatch(
                "b1",
                [
                    cloudSection("orders", ["customer", "colour"], [cloudPut("o1", ["Ada", "red"]), cloudPut("o2", ["Bea", "blue"])]),
                    cloudSection("notes", ["body"], [cloudPut("n1", ["kept"])]),
                ]))
        let expected = BatchAnswer.RowRejection(
            code: "unknown_column", message: "the cloud's table 'orders' has no column 'colour'", field: "colour")
        #expect(answer.results[0].rows == [.rejected(id: "o1", expected), .rejected(id: "o2", expected)])
        #expect(answer.results[1].rows == [.accepted(id: "n1", version: 1)])
        #expect(cloud.versions["orders"] == 0)
        #expect(try await cloud.allChanges("orders").isEmpty)
    }

    @Test(arguments: Backend.allCases) func aWrongTypeRejectsOnlyItsRowAndTakesNoVersion(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend)
        defer { try? cloud.close() }
        let answer = try await cloud.send(
            cloudBatch(
                "b1",
                [
                    cloudSection(
                        "orders", ["customer", "total", "paid"],
                        [
                            cloudPut("o1", ["Ada", 1.5, true]),
                            cloudPut("o2", ["Bea", "lots", false]),
                            cloudPut("bad id", ["Cy", 1, false]),
                            cloudPut("o3", ["Di", 2, "yes"]),
                            cloudPut("o4", ["Ed", 3, false]),
                        ])
                ]))
        let rows = answer.allRows
        #expect(rows.map(\.id) == ["o1", "o2", "bad id", "o3", "o4"])
        #expect(rows[0] == .accepted(id: "o1", version: 1))
        #expect(rows[4] == .accepted(id: "o4", version: 2))
        if case .rejected(_, let rejection) = rows[1] {
            #expect(rejection.code == "wrong_type")
            #expect(rejection.field == "total")
        } else {
            Issue.record("o2 was not rejected: \(rows[1])")
        }
        if case .rejected(_, let rejection) = rows[2] {
            #expect(rejection.code == "invalid_id")
        } else {
            Issue.record("'bad id' was not rejected: \(rows[2])")
        }
        if case .rejected(_, let rejection) = rows[3] {
            #expect(rejection.code == "wrong_type")
            #expect(rejection.field == "paid")
        } else {
            Issue.record("o3 was not rejected: \(rows[3])")
        }
        #expect(cloud.versions["orders"] == 2)
        let stored = try await cloud.allChanges("orders")
        #expect(stored.map(\.id) == ["o1", "o4"])
        #expect(stored.map(\.values) == [["Ada", 1.5, true], ["Ed", 3.0, false]])
    }

    /// An id no store can even look up (PostgreSQL refuses U+0000 in any text) is refused with
    /// its row alone, before its row is read: on PostgreSQL it failed the batch with `storage`.
    @Test(arguments: Backend.allCases) func anIDWithANulIsRefusedAloneBeforeAnyRead(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend)
        defer { try? cloud.close() }
        let answer = try await cloud.send(
            cloudBatch(
                "b1",
                [
                    cloudSection(
                        "orders", ["customer", "total", "paid"],
                        [cloudPut("a\u{0}b", ["Ada", 1, true]), cloudDelete("c\u{0}"), cloudPut("o1", ["Bea", 2, false])])
                ]))
        let rows = answer.allRows
        let codes = rows.map { row -> String? in
            guard case .rejected(_, let rejection) = row else { return nil }
            return rejection.code
        }
        #expect(codes == ["invalid_id", "invalid_id", nil])
        #expect(rows.last == .accepted(id: "o1", version: 1))
        #expect(try await cloud.allChanges("orders").map(\.id) == ["o1"])
    }

    @Test(arguments: Backend.allCases) func aDeleteLeavesATombstoneWithItsOwnVersion(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend)
        defer { try? cloud.close() }
        _ = try await cloud.send(cloudBatch("b1", [cloudSection("orders", ["customer", "total", "paid"], [cloudPut("o1", ["Ada", 2, true])])]))
        let answer = try await cloud.send(
            cloudBatch("b2", [cloudSection("orders", ["customer", "total", "paid"], [cloudDelete("o1", base: 1, at: 5_000), cloudDelete("never")])]))
        #expect(answer.allRows == [.accepted(id: "o1", version: 2), .accepted(id: "never", version: 3)])

        let rows = try await cloud.allChanges("orders")
        #expect(
            rows == [
                ChangePage.ChangedRow(id: "o1", version: 2, updatedAt: 5_000, deleted: true, values: []),
                ChangePage.ChangedRow(id: "never", version: 3, updatedAt: 1_000, deleted: true, values: []),
            ])
        let statistics = try await cloud.statistics()
        #expect(statistics.tables["orders"]?.live == 0)
        #expect(statistics.tables["orders"]?.tombstones == 2)
        #expect(statistics.tables["orders"]?.version == 3)

        // A put over a tombstone based on it revives the row, with no old values.
        let revived = try await cloud.send(
            cloudBatch("b3", [cloudSection("orders", ["customer"], [cloudPut("o1", base: 2, ["Ada again"])])]))
        #expect(revived.allRows == [.accepted(id: "o1", version: 4)])
        #expect(try await cloud.allChanges("orders").last?.values == ["Ada again", nil, nil])
        // Counted again: the revived row live, the other tombstone still one.
        let after = try await cloud.statistics().tables["orders"]
        #expect(after?.live == 1)
        #expect(after?.tombstones == 1)
    }

    @Test(arguments: Backend.allCases) func everyColumnTypeAndNullRoundTripsAmongPutsAndDeletesOfOneBatch(
        _ backend: Backend
    ) async throws {
        let kinds = table(
            "kinds", [("t", .text), ("i", .integer), ("r", .real), ("b", .boolean), ("bl", .blob), ("j", .json)])
        let cloud = try await openCloud(backend, tables: [kinds])
        defer { try? cloud.close() }
        let columns = ["t", "i", "r", "b", "bl", "j"]
        let full: [JSONValue] = ["naïve ☃", -9_007_199_254_740_993, 2.5, true, "AAEC/w==", ["a": [1, 2], "b": nil]]
        _ = try await cloud.send(cloudBatch("b1", [cloudSection("kinds", columns, [cloudPut("gone", ["x", 1, 1, false, nil, nil])])]))
        let answer = try await cloud.send(
            cloudBatch(
                "b2",
                [
                    cloudSection(
                        "kinds", columns,
                        [
                            cloudPut("k1", full), cloudDelete("gone", base: 1, at: 3_000),
                            cloudPut("k2", [nil, nil, nil, nil, nil, nil]), cloudPut("k3", ["", 0, 3, false, "", []]),
                        ])
                ]))
        #expect(
            answer.allRows == [
                .accepted(id: "k1", version: 2), .accepted(id: "gone", version: 3), .accepted(id: "k2", version: 4),
                .accepted(id: "k3", version: 5),
            ])
        let rows = try await cloud.allChanges("kinds")
        #expect(rows.map(\.id) == ["k1", "gone", "k2", "k3"])
        #expect(rows[0].values == full)
        #expect(rows[1] == ChangePage.ChangedRow(id: "gone", version: 3, updatedAt: 3_000, deleted: true, values: []))
        #expect(rows[2].values == [nil, nil, nil, nil, nil, nil])
        #expect(rows[3].values == ["", 0, 3.0, false, "", []])
    }

    @Test(arguments: Backend.allCases) func reopeningKeepsVersionsRowsAndTheRecordOfAnswers(_ backend: Backend) async throws {
        let place = try await CloudPlace(backend)
        let batch = cloudBatch("b1", [cloudSection("notes", ["body"], [cloudPut("n1", ["a"]), cloudPut("n2", ["b"])])])
        do {
            let cloud = try await place.open()
            _ = try await cloud.send(batch)
            _ = try await cloud.send(cloudBatch("b2", [cloudSection("orders", ["customer"], [cloudPut("o1", ["x"])])]))
            try cloud.close()
        }
        let cloud = try await place.open()
        #expect(cloud.versions["notes"] == 2)
        #expect(cloud.versions["orders"] == 1)
        #expect(try await cloud.allChanges("notes").map(\.id) == ["n1", "n2"])
        let replay = try await cloud.send(batch)
        #expect(replay.replayed)
        #expect(replay.allRows == [.accepted(id: "n1", version: 1), .accepted(id: "n2", version: 2)])
        let next = try await cloud.send(cloudBatch("b3", [cloudSection("notes", ["body"], [cloudPut("n3", ["c"])])]))
        #expect(next.allRows == [.accepted(id: "n3", version: 3)])
        try cloud.close()
    }

    @Test func aSecondStoreCannotOpenTheSameDirectory() throws {
        let directory = temporaryDirectory()
        let cloud = try openSQLiteCloud(directory)
        #expect(throws: StoreError.self) { try openSQLiteCloud(directory) }
        try cloud.close()
        try openSQLiteCloud(directory).close()
    }
}
