import DallyCore
import Testing

/// Every row and feed endpoint through real HTTP on 127.0.0.1.
@Suite("End to end: rows, batches, pages")
struct RowsEndToEndTests {
    @Test func putGetPatchDeleteRoundTrip() async throws {
        try await LiveGateway.run(LiveGateway.config()) { gw in
            let put = try await gw.send(
                .PUT, "/v1/tables/orders/rows/o1",
                body: #"{"values":{"customer":"Ada","total":12.5,"paid":false,"items":[{"sku":"A1"}],"qty":2},"updated_at":1700000000000}"#)
            #expect(put.status == 200)
            #expect(put.json["seq"]?.int == 1)
            #expect(put.json["updated_at"]?.int == 1_700_000_000_000)
            #expect(put.json["version"] == .null)
            #expect(put.headers["ETag"].first == "\"1\"")
            #expect(put.json["values"]?["items"] == [["sku": "A1"]])

            let patched = try await gw.send(.PATCH, "/v1/tables/orders/rows/o1", body: #"{"values":{"paid":true}}"#)
            #expect(patched.json["values"]?["paid"] == true)
            #expect(patched.json["values"]?["customer"] == "Ada")
            #expect(patched.json["seq"]?.int == 2)

            let got = try await gw.send(.GET, "/v1/tables/orders/rows/o1")
            #expect(got.status == 200)
            #expect(got.json == patched.json)

            let deleted = try await gw.send(.DELETE, "/v1/tables/orders/rows/o1")
            #expect(deleted.json["deleted"] == true)
            #expect(try await gw.send(.GET, "/v1/tables/orders/rows/o1").status == 404)
        }
    }

    /// A read that sends back the tag it holds (`If-None-Match`, as HTTP caches do: one tag,
    /// a list, weak ones, or `*`) gets `304` and no body while the row is unchanged, the row
    /// again once a write changed it.
    @Test func aRowReadWithItsCurrentTagInIfNoneMatchIsNotModified() async throws {
        try await LiveGateway.run(LiveGateway.config()) { gw in
            let path = "/v1/tables/orders/rows/o1"
            _ = try await gw.send(.PUT, path, body: #"{"values":{"total":1}}"#)
            for held in [#""1""#, #""7", W/"1""#, "*"] {
                let cached = try await gw.send(.GET, path, headers: [("If-None-Match", held)])
                #expect(cached.status == 304, "\(held)")
                #expect(cached.body.isEmpty)
                #expect(cached.headers["ETag"].first == #""1""#)
            }
            _ = try await gw.send(.PATCH, path, body: #"{"values":{"total":2}}"#)
            let changed = try await gw.send(.GET, path, headers: [("If-None-Match", #""1""#)])
            #expect(changed.status == 200)
            #expect(changed.headers["ETag"].first == #""2""#)
            #expect(changed.json["values"]?["total"] == 2.0)
        }
    }

    /// A path's segments are read percent-decoded: `o%7E1` is `o~1`, as clients that escape
    /// `~` write it; a table or column name alike. A segment that decodes to what no id may
    /// hold is still refused.
    @Test func percentEncodedPathSegmentsNameTheSameRow() async throws {
        try await LiveGateway.run(LiveGateway.config()) { gw in
            let put = try await gw.send(.PUT, "/v1/tables/ord%65rs/rows/o%7E1", body: #"{"values":{"total":3}}"#)
            #expect(put.status == 200, "\(put.body)")
            #expect(put.json["id"] == "o~1")
            let got = try await gw.send(.GET, "/v1/tables/orders/rows/o~1")
            #expect(got.json["values"]?["total"] == 3.0)
            #expect(try await gw.send(.GET, "/v1/tables/orders/rows/o%7e1").status == 200)
            let slash = try await gw.send(.PUT, "/v1/tables/orders/rows/a%2Fb", body: #"{"values":{}}"#)
            #expect(slash.errorCode == "invalid_id")
            let undecodable = try await gw.send(.PUT, "/v1/tables/orders/rows/a%ZZ", body: #"{"values":{}}"#)
            #expect(undecodable.errorCode == "invalid_id")
            // A conflict's id is an id: refused as one, not looked up.
            let conflict = try await gw.send(.DELETE, "/v1/conflicts/orders/bad%20id")
            #expect(conflict.status == 400)
            #expect(conflict.errorCode == "invalid_id")
        }
    }

    @Test func aWriterTimePastYear9999IsRefused() async throws {
        try await LiveGateway.run(LiveGateway.config()) { gw in
            let last = try await gw.send(
                .PUT, "/v1/tables/orders/rows/o1", body: #"{"values":{},"updated_at":253402300799999}"#)
            #expect(last.status == 200, "\(last.body)")
            for body in [#"{"values":{},"updated_at":253402300800000}"#, #"{"values":{},"updated_at":9223372036854775807}"#] {
                let late = try await gw.send(.PUT, "/v1/tables/orders/rows/o2", body: body)
                #expect(late.errorCode == "bad_request", "\(late.body)")
                #expect(late.json["error"]?["field"]?.string == "updated_at")
            }
            #expect(try await gw.send(.GET, "/v1/tables/orders/rows/o2").status == 404)
        }
    }

    @Test func aBodyStartingWithAByteOrderMarkIsRead() async throws {
        // As a file saved by Notepad (before 2019) and posted with PowerShell's `-InFile` arrives.
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        try await LiveGateway.run(LiveGateway.config()) { gw in
            let put = try await gw.send(
                .PUT, "/v1/tables/orders/rows/o1", bytes: bom + Array(#"{"values":{"total":3}}"#.utf8))
            #expect(put.status == 200, "\(put.body)")
            let batch = try await gw.send(
                .POST, "/v1/tables/orders/batch", bytes: bom + Array(#"{"created":[{"id":"o2","values":{}}]}"#.utf8))
            #expect(batch.status == 200, "\(batch.body)")
            #expect(try await gw.send(.GET, "/v1/tables/orders/rows/o2").status == 200)
            // A mark anywhere else is what it is: not JSON.
            let inside = try await gw.send(
                .PUT, "/v1/tables/orders/rows/o3", bytes: Array(" ".utf8) + bom + Array(#"{"values":{}}"#.utf8))
            #expect(inside.errorCode == "malformed_json")
        }
    }

    @Test func expectedSequenceViaIfMatchOrBodyRefusesStaleWritesWithTheCurrentRow() async throws {
        try await LiveGateway.run(LiveGateway.config()) { gw in
            _ = try await gw.send(.PUT, "/v1/tables/notes/rows/n1", body: #"{"values":{"body":"a"}}"#)
            let ok = try await gw.send(.PUT, "/v1/tables/notes/rows/n1", body: #"{"values":{"body":"b"}}"#, headers: [("If-Match", "\"1\"")])
            #expect(ok.status == 200)
            let stale = try await gw.send(.PUT, "/v1/tables/notes/rows/n1", body: #"{"values":{"body":"c"},"expected_seq":1}"#)
            #expect(stale.status == 409)
            #expect(stale.errorCode == "version_mismatch")
            #expect(stale.json["current"]?["values"]?["body"] == "b")
            // `current` is the row as GET writes it, byte for byte (a REAL read `2` beside `2.0`).
            _ = try await gw.send(.PUT, "/v1/tables/orders/rows/o9", body: #"{"values":{"total":2}}"#)
            let current = try await gw.send(.GET, "/v1/tables/orders/rows/o9")
            let mismatch = try await gw.send(.PUT, "/v1/tables/orders/rows/o9", body: #"{"values":{},"expected_seq":99}"#)
            #expect(mismatch.body.hasPrefix(#"{"current":"# + current.body + #","error":{"code":"version_mismatch","#), "\(mismatch.body)")
            let createOnly = try await gw.send(.PUT, "/v1/tables/notes/rows/n1", body: #"{"values":{}}"#, headers: [("If-None-Match", "*")])
            #expect(createOnly.status == 409)
            #expect(try await gw.send(.GET, "/v1/tables/notes/rows/n1").json["values"]?["body"] == "b")
            // `If-Match: *` (RFC 9110: any current representation): replaces a row that exists,
            // never creates one; refused 400 before.
            let replace = try await gw.send(.PUT, "/v1/tables/notes/rows/n1", body: #"{"values":{"body":"d"}}"#, headers: [("If-Match", "*")])
            #expect(replace.status == 200, "\(replace.body)")
            #expect(replace.json["values"]?["body"] == "d")
            let absent = try await gw.send(.PUT, "/v1/tables/notes/rows/n2", body: #"{"values":{"body":"x"}}"#, headers: [("If-Match", "*")])
            #expect(absent.status == 409)
            #expect(absent.errorCode == "version_mismatch")
            #expect(try await gw.send(.GET, "/v1/tables/notes/rows/n2").status == 404)
            let contradictory = try await gw.send(
                .PUT, "/v1/tables/notes/rows/n1", body: #"{"values":{},"expected_seq":0}"#, headers: [("If-Match", "*")])
            #expect(contradictory.status == 400)
        }
    }

    @Test func batchAnswersPerRowInTinySyncShape() async throws {
        try await LiveGateway.run(LiveGateway.config()) { gw in
            _ = try await gw.send(.PUT, "/v1/tables/orders/rows/old", body: #"{"values":{"qty":1}}"#)
            let reply = try await gw.send(
                .POST, "/v1/tables/orders/batch",
                body: """
                    {"created":[{"id":"a","values":{"qty":1}},{"id":"b","values":{"qty":"x"}},{"values":{}}],
                     "updated":[{"id":"old","values":{"paid":true}},{"id":"ghost","values":{"paid":true}}],
                     "deleted":["a"]}
                    """)
            #expect(reply.status == 200)
            #expect(reply.json["saved"] == ["a", "old", "a"])
            let errors = reply.json["errors"]?.array ?? []
            #expect(errors.map { $0["id"] } == ["b", .null, "ghost"])
            #expect(errors.map { $0["code"] } == ["wrong_type", "invalid_id", "not_found"])
            #expect(errors.first?["field"] == "qty")
            #expect(reply.json["seq"]?.int == 4)

            let strict = try await gw.send(
                .POST, "/v1/tables/orders/batch",
                body: #"{"created":[{"id":"c","values":{}},{"id":"d","values":{"nope":1}}],"all_or_nothing":true}"#)
            #expect(strict.json["saved"] == [])
            #expect(strict.json["errors"]?.array?.count == 1)
            #expect(try await gw.send(.GET, "/v1/tables/orders/rows/c").status == 404)
        }
    }

    @Test func rowsArePagedByATieFreeCursorAndFilterable() async throws {
        try await LiveGateway.run(LiveGateway.config()) { gw in
            // Three batches (the test limit on body size is 2 KiB), every row with the same updated_at.
            for chunk in stride(from: 0, to: 45, by: 15) {
                let created = (chunk..<chunk + 15).map { #"{"id":"r\#($0)","values":{"qty":\#($0 % 3),"customer":"c\#($0 % 2)"},"updated_at":5}"# }
                let reply = try await gw.send(.POST, "/v1/tables/orders/batch", body: #"{"created":[\#(created.joined(separator: ","))]}"#)
                #expect(reply.json["saved"]?.array?.count == 15)
            }
            var ids: [String] = []
            var since: Int64 = 0
            var more = true
            var pages = 0
            while more {
                let page = try await gw.send(.GET, "/v1/tables/orders/rows?since=\(since)&limit=20")
                ids += (page.json["rows"]?.array ?? []).compactMap { $0["id"]?.string }
                since = page.json["next_since"]?.int ?? -1
                more = page.json["more"] == true
                pages += 1
            }
            #expect(pages == 3)
            #expect(ids == (0..<45).map { "r\($0)" })

            let filtered = try await gw.send(.GET, "/v1/tables/orders/rows?where=qty:2&where=customer:c1&limit=20")
            let filteredIDs = (filtered.json["rows"]?.array ?? []).compactMap { $0["id"]?.string }
            #expect(filteredIDs == (0..<45).filter { $0 % 3 == 2 && $0 % 2 == 1 }.map { "r\($0)" })
        }
    }

    @Test func changesFeedsIncludeTombstonesAndSpanTables() async throws {
        try await LiveGateway.run(LiveGateway.config()) { gw in
            _ = try await gw.send(.PUT, "/v1/tables/orders/rows/o1", body: #"{"values":{}}"#)
            _ = try await gw.send(.PUT, "/v1/tables/notes/rows/n1", body: #"{"values":{"body":"x"}}"#)
            _ = try await gw.send(.DELETE, "/v1/tables/orders/rows/o1")

            let orders = try await gw.send(.GET, "/v1/tables/orders/changes?since=0")
            #expect((orders.json["changes"]?.array ?? []).map { $0["seq"] } == [3])
            #expect(orders.json["changes"]?.array?.first?["deleted"] == true)

            let both = try await gw.send(.GET, "/v1/changes?tables=orders,notes&since=1")
            #expect((both.json["changes"]?.array ?? []).map { $0["table"] } == ["notes", "orders"])
            #expect(both.json["next_since"]?.int == 3)
            // A table named again is read once.
            let again = try await gw.send(.GET, "/v1/changes?tables=orders,notes,orders,notes&since=1")
            #expect(again.json == both.json)

            let readable = try await gw.send(.GET, "/v1/changes?since=0", token: LiveGateway.readerToken)
            #expect((readable.json["changes"]?.array ?? []).map { $0["table"] } == ["orders"])
        }
    }

    @Test func healthStatsAndMetricsReportWhatHappened() async throws {
        try await LiveGateway.run(LiveGateway.config()) { gw in
            #expect(try await gw.send(.GET, "/healthz", token: nil).json == ["status": "ok"])
            _ = try await gw.send(.PUT, "/v1/tables/orders/rows/a", body: #"{"values":{}}"#)
            _ = try await gw.send(.PUT, "/v1/tables/orders/rows/a", body: #"{"values":{"qty":2}}"#)
            _ = try await gw.send(.PUT, "/v1/tables/orders/rows/b", body: #"{"values":{}}"#)
            _ = try await gw.send(.DELETE, "/v1/tables/orders/rows/b")
            _ = try await gw.send(.PUT, "/v1/tables/orders/rows/c", body: "{")

            let stats = try await gw.stats()
            let orders = stats["tables"]?["orders"]
            #expect(orders?["rows"]?.int == 1)
            #expect(orders?["tombstones"]?.int == 1)
            #expect(orders?["writes"]?.int == 4)
            #expect(orders?["coalesced_writes"]?.int == 2)
            #expect(orders?["outbox_pending"]?.int == 2)
            #expect(orders?["outbox_oldest_age_ms"]?.int != nil)
            #expect(stats["store"]?["last_seq"]?.int == 4)
            #expect((stats["store"]?["bytes"]?.int ?? 0) > 0)
            #expect(stats["waiters"]?["current"]?.int == 0)
            #expect((stats["open_files"]?["soft"]?.int ?? 0) > 0)
            // Four writes committed (the malformed one never reached the store), each timed.
            let waits = stats["store"]?["writer"]?["local_waits"]
            #expect(waits?["count"]?.int == 4)
            #expect(waits?["buckets_ms"]?["+Inf"]?.int == 4)
            #expect(stats["store"]?["writer"]?["sync_holds"]?["count"]?.int == 0)
            let requests = stats["requests"]?.array ?? []
            let put400 = requests.first { $0["method"] == "PUT" && $0["status"]?.int == 400 }
            #expect(put400?["route"] == "/v1/tables/{table}/rows/{id}")
            #expect(put400?["count"]?.int == 1)

            let metrics = try await gw.send(.GET, "/metrics", token: LiveGateway.adminToken)
            #expect(metrics.status == 200)
            #expect(metrics.body.contains(#"dally_table_rows{table="orders"} 1"#))
            #expect(metrics.body.contains(#"dally_outbox_pending{table="orders"} 2"#))
            #expect(metrics.body.contains("dally_http_requests_total{"))
            #expect(metrics.body.contains("dally_longpoll_waiters 0"))
            #expect(metrics.body.contains(#"dally_store_write_wait_seconds_bucket{le="+Inf"} 4"#))
            #expect(metrics.body.contains("dally_store_write_wait_seconds_count 4"))
            #expect(metrics.body.contains(#"dally_store_sync_hold_seconds_count{step="apply_answer"} 0"#))
            // Every series says what it means.
            #expect(metrics.body.contains("# HELP dally_outbox_pending Row changes waiting to go to the cloud."))
            let types = metrics.body.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }
            let helps = metrics.body.split(separator: "\n").filter { $0.hasPrefix("# HELP ") }
            #expect(!types.isEmpty)
            #expect(helps.count == types.count)
        }
    }
}
