import DallyCore
import Testing

@testable import DallySync

@Suite("Sync wire formats: round trips")
struct WireRoundTripTests {
    static let serverRow = ChangePage.ChangedRow(
        id: "o7", version: 12, updatedAt: 1_700_000_000_500, deleted: false, values: ["Bea", 3.25, false, nil])
    static let serverTombstone = ChangePage.ChangedRow(
        id: "o8", version: 13, updatedAt: 1_700_000_000_600, deleted: true, values: [])

    static let page = ChangePage(
        table: "orders", columns: ["customer", "total", "paid", "meta"], since: 10, version: 14, more: true,
        rows: [
            ChangePage.ChangedRow(
                id: "o1", version: 11, updatedAt: 1_700_000_000_000, deleted: false,
                values: ["Ada \"the\" Countess\n✓", 12.5, true, ["tags": ["a", 1, nil], "n": -3]]),
            serverTombstone,
            ChangePage.ChangedRow(id: "o9", version: 14, updatedAt: 0, deleted: false, values: [nil, nil, nil, nil]),
        ])

    @Test func batchRequestSurvivesEncodeAndDecode() throws {
        let request = BatchRequest(
            batchID: "0f8b-AZ_az09", gateway: "gw-east", replica: "6a3c1f2e-replica",
            since: TableVersions([("orders", 41), ("notes", 0)]),
            sections: [
                BatchRequest.Section(
                    table: "orders", columns: ["customer", "total", "paid", "meta"],
                    changes: [
                        BatchRequest.Change(
                            id: "o1", baseVersion: nil, updatedAt: 1_700_000_000_000, deleted: false,
                            values: ["Ada \"q\" ü ✓", 12.5, true, ["k": [1, nil, "x"]]]),
                        BatchRequest.Change(id: "o2", baseVersion: 7, updatedAt: 5, deleted: true, values: []),
                        BatchRequest.Change(
                            id: "o3", baseVersion: 0, updatedAt: 6, deleted: false, values: [nil, -1, false, nil]),
                    ]),
                BatchRequest.Section(
                    table: "notes", columns: ["body"],
                    changes: [BatchRequest.Change(id: "n1", baseVersion: 3, updatedAt: 9, deleted: false, values: [""])]),
                BatchRequest.Section(table: "empty_one", columns: [], changes: []),
            ])
        let decoded = try BatchRequest.decode(json(request.encode()), maxRows: 4)
        #expect(decoded == request)
        #expect(decoded.rowCount == 4)
        #expect(decoded.since["orders"] == 41)
        #expect(decoded.since["notes"] == 0)
        #expect(decoded.since["missing"] == nil)
        // The order of the cursors is kept, not sorted.
        #expect(decoded.since.entries.map(\.table) == ["orders", "notes"])
    }

    /// ``BatchSectionWriter``'s documented example: a section written row by row makes the
    /// body that a request holding the same change encodes.
    @Test func aSectionWrittenRowByRowIsTheRequestsSection() throws {
        var section = BatchSectionWriter(table: "orders", columns: ["customer", "qty"])
        section.beginRow(id: "o1", baseVersion: nil, updatedAt: 1_700_000_000_000, deleted: false)
        section.value(.string("Ada"))
        section.value { $0.int(3) }
        section.endRow()
        section.beginRow(id: "o2", baseVersion: 4, updatedAt: 1_700_000_000_001, deleted: true)
        section.endRow()
        let header = BatchRequest(batchID: "b1", gateway: "g", replica: "r", since: TableVersions([]), sections: [])
        let body = header.encode(writtenSections: [section])
        var request = header
        request.sections = [
            BatchRequest.Section(
                table: "orders", columns: ["customer", "qty"],
                changes: [
                    BatchRequest.Change(id: "o1", baseVersion: nil, updatedAt: 1_700_000_000_000, deleted: false, values: ["Ada", 3]),
                    BatchRequest.Change(id: "o2", baseVersion: 4, updatedAt: 1_700_000_000_001, deleted: true, values: []),
                ])
        ]
        #expect(body == request.encode())
        #expect(try BatchRequest.decode(body: body, maxRows: 10) == request)
        #expect(section.ids == ["o1", "o2"] && section.rows == 2)
        #expect(header.encode(writtenSections: [BatchSectionWriter(request.sections[0])]) == body)
        #expect(section.outline == request.outline.sections[0])
    }

    @Test func aBatchWithoutSinceDecodesWithNoCursors() throws {
        let decoded = try BatchRequest.decode(
            json(#"{"batch":"b1","gateway":"g","replica":"r","sections":[]}"#), maxRows: 10)
        #expect(decoded.since.isEmpty)
        #expect(decoded.sections.isEmpty)
    }

    @Test func batchAnswerWithEveryResultKindSurvivesEncodeAndDecode() throws {
        let answer = BatchAnswer(
            batchID: "b-42", replayed: true,
            results: [
                BatchAnswer.SectionResult(
                    table: "orders",
                    rows: [
                        .accepted(id: "o1", version: 11),
                        .conflict(
                            id: "o7",
                            BatchAnswer.Conflict(
                                policy: .lastWriterWins, winner: .server, version: 12, server: Self.serverRow)),
                        .conflict(
                            id: "o8",
                            BatchAnswer.Conflict(
                                policy: .manual, winner: .none, version: 13, server: Self.serverTombstone)),
                        .conflict(
                            id: "o5",
                            BatchAnswer.Conflict(policy: .clientWins, winner: .client, version: 15, server: Self.serverRow)),
                        .rejected(
                            id: "o6",
                            BatchAnswer.RowRejection(
                                code: "wrong_type", message: "column 'total' expects REAL, got \"string\"", field: "total")),
                        .rejected(
                            id: "bad id", BatchAnswer.RowRejection(code: "invalid_id", message: "no", field: nil)),
                    ]),
                BatchAnswer.SectionResult(table: "notes", rows: []),
            ],
            changes: [
                Self.page,
                // A page without live rows travels without its columns.
                ChangePage(table: "notes", columns: [], since: 0, version: 3, more: false, rows: []),
            ])
        let decoded = try BatchAnswer.decode(json(answer.encode()), outline: Self.outline(of: answer))
        #expect(decoded == answer)
        #expect(decoded.results[0].rows.map(\.id) == ["o1", "o7", "o8", "o5", "o6", "bad id"])

        // The results alone, as the cloud stores them for a retry, decode to the same.
        let stored = try BatchAnswer.decodeResults(
            json(BatchAnswer.encodeResults(answer.results)), outline: Self.outline(of: answer))
        #expect(stored == answer.results)
    }

    @Test func anEmptyBatchAnswerSurvivesEncodeAndDecode() throws {
        let answer = BatchAnswer(batchID: "b", replayed: false, results: [], changes: [])
        #expect(try BatchAnswer.decode(json(answer.encode()), outline: BatchOutline(sections: [])) == answer)
        #expect(String(decoding: answer.encode(), as: UTF8.self) == #"{"batch":"b","replayed":false,"results":[],"changes":[]}"#)
    }

    /// The row ids an answer names, as the batch it answers would list them.
    static func outline(of answer: BatchAnswer) -> BatchOutline {
        BatchOutline(sections: answer.results.map { .init(table: $0.table, ids: $0.rows.map(\.id)) })
    }

    @Test func acceptedRowsTravelAsRunsWithoutIds() throws {
        let rejection = BatchAnswer.RowRejection(code: "wrong_type", message: "no", field: "total")
        let answer = BatchAnswer(
            batchID: "b", replayed: false,
            results: [
                .init(
                    table: "t",
                    rows: [
                        .accepted(id: "a", version: 7), .accepted(id: "b", version: 8), .accepted(id: "c", version: 9),
                        .rejected(id: "d", rejection), .accepted(id: "e", version: 10), .accepted(id: "f", version: 12),
                    ])
            ], changes: [])
        let text = String(decoding: answer.encode(), as: UTF8.self)
        #expect(text.contains(#""rows":[[3,7],["d","error",{"code":"wrong_type","message":"no","field":"total"}],[1,10],[1,12]]"#))
        #expect(try BatchAnswer.decode(json(answer.encode()), outline: Self.outline(of: answer)) == answer)
    }

    @Test func anAnswerThatDoesNotLineUpWithTheBatchIsMalformed() throws {
        let outline = BatchOutline(sections: [.init(table: "t", ids: ["a", "b"])])
        let cases: [(String, String)] = [
            (#"[{"table":"t","rows":[[3,7]]}]"#, "results[0].rows[0][0]"),  // a run longer than the section
            (#"[{"table":"t","rows":[[1,7]]}]"#, "results[0].rows"),  // too few results
            (#"[{"table":"t","rows":[["b","ok",7],["a","ok",8]]}]"#, "results[0].rows[0]"),  // out of order
            (#"[{"table":"u","rows":[[2,7]]}]"#, "results[0].table"),  // another table
            (#"[]"#, "results"),  // a section missing
            (#"[{"table":"t","rows":[[0,7],[2,7]]}]"#, "results[0].rows[0][0]"),  // an empty run
        ]
        for (results, field) in cases {
            do {
                _ = try BatchAnswer.decodeResults(json(results), outline: outline)
                Issue.record("accepted \(results)")
            } catch let error as DallyError {
                #expect(error.field == field, "\(results)")
            }
        }
        // Ids in full form still decode, as answers stored before runs existed are written.
        let full = try BatchAnswer.decodeResults(json(#"[{"table":"t","rows":[["a","ok",7],[1,9]]}]"#), outline: outline)
        #expect(full[0].rows == [.accepted(id: "a", version: 7), .accepted(id: "b", version: 9)])
    }

    @Test func changePageSurvivesEncodeAndDecode() throws {
        #expect(try ChangePage.decode(json(Self.page.encode())) == Self.page)
        // A tombstone travels without values.
        let text = String(decoding: Self.page.encode(), as: UTF8.self)
        #expect(text.contains(#"["o8",13,1700000000600,true]"#))

        let empty = ChangePage(table: "notes", columns: ["body"], since: 2, version: 3, more: false, rows: [])
        #expect(String(decoding: empty.encode(), as: UTF8.self) == #"{"table":"notes","since":2,"version":3,"more":false,"rows":[]}"#)
    }

    @Test func notifyAnswerSurvivesEncodeAndDecode() throws {
        let answer = NotifyAnswer(versions: TableVersions([("orders", 45), ("telemetry", 0)]))
        #expect(String(decoding: answer.encode(), as: UTF8.self) == #"{"versions":{"orders":45,"telemetry":0}}"#)
        #expect(try NotifyAnswer.decode(json(answer.encode())) == answer)

        let empty = NotifyAnswer(versions: TableVersions())
        #expect(String(decoding: empty.encode(), as: UTF8.self) == #"{"versions":{}}"#)
        #expect(try NotifyAnswer.decode(json(empty.encode())) == empty)
    }

    @Test func aNotifyAnswerCarriesPagesInline() throws {
        let page = ChangePage(
            table: "orders", columns: ["customer"], since: 44, version: 45, more: false,
            rows: [.init(id: "o7", version: 45, updatedAt: 1000, deleted: false, values: [.string("Ann")])])
        let answer = NotifyAnswer(versions: TableVersions([("orders", 45)]), changes: [page])
        #expect(
            String(decoding: answer.encode(), as: UTF8.self)
                == #"{"versions":{"orders":45},"changes":[{"table":"orders","columns":["customer"],"since":44,"version":45,"more":false,"rows":[["o7",45,1000,false,"Ann"]]}]}"#
        )
        #expect(try NotifyAnswer.decode(json(answer.encode())) == answer)
        #expect(throws: DallyError.self) { try NotifyAnswer.decode(json(Array(#"{"versions":{},"changes":[1]}"#.utf8))) }
    }

    @Test func aSharedPageLeavesOutTheAskersRowsAndKeepsItsCursor() {
        func row(_ id: String, _ version: Int64, _ origin: String) -> ChangePage.ChangedRow {
            .init(id: id, version: version, updatedAt: 1000, deleted: false, values: [.string(id)], origin: origin)
        }
        let page = ChangePage(
            table: "orders", columns: ["customer"], since: 10, version: 13, more: true,
            rows: [row("a", 11, "gw-1/r"), row("b", 12, "gw-2/r"), row("c", 13, "gw-1/r")])
        let forOne = page.leavingOut(replica: "gw-1/r")
        #expect(forOne.rows.map(\.id) == ["b"])
        #expect(forOne.version == 13)
        #expect(forOne.more)
        #expect(page.leavingOut(replica: "gw-3/r") == page)
        // Origins are bookkeeping: rows compare as the wire carries them.
        #expect(row("a", 11, "x") == row("a", 11, "y"))
    }

    @Test func tableVersionsEqualityIsOrderSensitive() {
        #expect(TableVersions([("a", 1), ("b", 2)]) == TableVersions([("a", 1), ("b", 2)]))
        #expect(TableVersions([("a", 1), ("b", 2)]) != TableVersions([("b", 2), ("a", 1)]))
        #expect(TableVersions([("a", 1)]) != TableVersions([("a", 2)]))
    }
}

@Suite("Sync wire formats: refusals name the path")
struct WireRefusalTests {
    static func section(_ rows: String, table: String = "orders", columns: String = #"["a","b"]"#) -> String {
        #"{"table":"\#(table)","columns":\#(columns),"rows":[\#(rows)]}"#
    }

    @Test func aMissingBatchIDIsRefusedNamingBatch() throws {
        let error = try batchRefusal(#"{"gateway":"gw","replica":"r1","sections":[]}"#)
        #expect(error?.code == .badRequest)
        #expect(error?.field == "batch")
        #expect(error?.message.contains("batch: missing") == true)
    }

    @Test(arguments: ["\"has space\"", "\"slash/y\"", "\"\"", "\"é\"", "\"\(String(repeating: "a", count: 65))\"", "42"])
    func aBadBatchIDIsRefusedNamingBatch(_ id: String) throws {
        let error = try batchRefusal(batchText(batch: id, sections: "[]"))
        #expect(error?.code == .badRequest)
        #expect(error?.field == "batch")
        #expect(error?.message.contains("batch") == true)
    }

    @Test func aBatchIDOfSixtyFourTokenCharactersIsAccepted() throws {
        let id = String(repeating: "aZ0-_", count: 12) + "abcd"
        #expect(id.count == 64)
        let request = try BatchRequest.decode(json(batchText(batch: "\"\(id)\"", sections: "[]")), maxRows: 1)
        #expect(request.batchID == id)
    }

    @Test func aBadReplicaIDIsRefusedNamingReplica() throws {
        let error = try batchRefusal(#"{"batch":"b1","gateway":"gw","replica":"a b","sections":[]}"#)
        #expect(error?.field == "replica")
    }

    @Test func aPutWithTheWrongNumberOfValuesIsRefusedNamingTheRow() throws {
        let tooFew = try batchRefusal(batchText(sections: "[\(Self.section(#"["r1",null,1,"put","x"]"#))]"))
        #expect(tooFew?.code == .badRequest)
        #expect(tooFew?.field == "sections[0].rows[0]")
        #expect(tooFew?.message.contains("sections[0].rows[0]") == true)
        #expect(tooFew?.message.contains("2, got 1") == true)

        let tooMany = try batchRefusal(
            batchText(
                sections: "[\(Self.section(#"["r0",null,1,"put",1,2]"#)),\(Self.section(#"["r1",null,1,"put",1,2],["r2",null,1,"put",1,2,3]"#, table: "notes"))]"
            ))
        #expect(tooMany?.field == "sections[1].rows[1]")
        #expect(tooMany?.message.contains("2, got 3") == true)
    }

    @Test func aDeleteWithValuesIsRefusedNamingTheRow() throws {
        let error = try batchRefusal(batchText(sections: "[\(Self.section(#"["r1",3,1,"delete","x"]"#))]"))
        #expect(error?.code == .badRequest)
        #expect(error?.field == "sections[0].rows[0]")
        #expect(error?.message.contains("delete") == true)
    }

    @Test func anUnknownOperationIsRefusedNamingItsPosition() throws {
        let error = try batchRefusal(
            batchText(sections: "[\(Self.section(#"["r0",null,1,"delete"],["r1",null,1,"upsert",1,2]"#))]"))
        #expect(error?.code == .badRequest)
        #expect(error?.field == "sections[0].rows[1][3]")
        #expect(error?.message.contains("sections[0].rows[1][3]") == true)
    }

    @Test func aRowIDTwiceInOneSectionIsRefusedNamingTheSecond() throws {
        let error = try batchRefusal(
            batchText(sections: "[\(Self.section(#"["r1",null,1,"delete"],["r2",null,1,"delete"],["r1",null,2,"put",1,2]"#))]"))
        #expect(error?.code == .badRequest)
        #expect(error?.field == "sections[0].rows[2]")
        #expect(error?.message.contains("'r1'") == true)
    }

    @Test func theSameRowIDInTwoSectionsIsAccepted() throws {
        let request = try BatchRequest.decode(
            json(
                batchText(
                    sections: "[\(Self.section(#"["r1",null,1,"delete"]"#)),\(Self.section(#"["r1",null,1,"delete"]"#, table: "notes"))]"
                )), maxRows: 10)
        #expect(request.sections.map(\.table) == ["orders", "notes"])
    }

    @Test func aTableWithTwoSectionsIsRefusedNamingTheSecond() throws {
        let error = try batchRefusal(
            batchText(sections: "[\(Self.section("")),\(Self.section("", table: "notes")),\(Self.section(""))]"))
        #expect(error?.code == .badRequest)
        #expect(error?.field == "sections[2].table")
        #expect(error?.message.contains("orders") == true)
    }

    @Test func aColumnNamedTwiceIsRefused() throws {
        let error = try batchRefusal(batchText(sections: "[\(Self.section("", columns: #"["a","b","a"]"#))]"))
        #expect(error?.field == "sections[0].columns[2]")
    }

    @Test func aNegativeOrFractionalBaseVersionIsRefused() throws {
        let negative = try batchRefusal(batchText(sections: "[\(Self.section(#"["r1",-1,1,"delete"]"#))]"))
        #expect(negative?.field == "sections[0].rows[0][1]")
        let fractional = try batchRefusal(batchText(sections: "[\(Self.section(#"["r1",1.5,1,"delete"]"#))]"))
        #expect(fractional?.field == "sections[0].rows[0][1]")
        let badTime = try batchRefusal(batchText(sections: "[\(Self.section(#"["r1",1,"now","delete"]"#))]"))
        #expect(badTime?.field == "sections[0].rows[0][2]")
    }

    @Test func aBadTableNameIsRefused() throws {
        let error = try batchRefusal(batchText(sections: "[\(Self.section("", table: "no-dash"))]"))
        #expect(error?.field == "sections[0].table")
    }

    @Test func tooManyRowsAcrossSectionsIsRefusedAsTooManyRows() throws {
        let text = batchText(
            sections: "[\(Self.section(#"["r1",null,1,"delete"],["r2",null,1,"delete"]"#)),\(Self.section(#"["r3",null,1,"delete"]"#, table: "notes"))]"
        )
        let error = try batchRefusal(text, maxRows: 2)
        #expect(error?.code == .tooManyRows)
        #expect(error?.message.contains("2") == true)
        // Exactly at the limit is fine.
        #expect(try BatchRequest.decode(json(text), maxRows: 3).rowCount == 3)
    }

    @Test func aBodyThatIsNotAnObjectIsRefusedNamingTheBody() throws {
        let error = try batchRefusal("[1,2]")
        #expect(error?.code == .badRequest)
        #expect(error?.message.contains("body") == true)
    }

    @Test func aMalformedChangePageInAnAnswerNamesItsPath() throws {
        let text = """
            {"batch":"b","replayed":false,"results":[],"changes":[
              {"table":"orders","columns":["a"],"since":0,"version":2,"more":false,"rows":[["x",1,5,false,1]]},
              {"table":"notes","columns":["a","b"],"since":0,"version":2,"more":false,"rows":[["x",1,5,false,1,2],["y",2,5,false,1]]}
            ]}
            """
        do {
            _ = try BatchAnswer.decode(json(text), outline: BatchOutline(sections: []))
            Issue.record("accepted a page row with too few values")
        } catch let error as DallyError {
            #expect(error.field == "changes[1].rows[1]")
            #expect(error.message.contains("changes[1].rows[1]"))
        }
    }

    @Test func aMalformedResultNamesItsPath() throws {
        let unknownKind = #"{"batch":"b","replayed":false,"changes":[],"results":[{"table":"t","rows":[["a","ok",1],["b","maybe",1]]}]}"#
        do {
            _ = try BatchAnswer.decode(json(unknownKind), outline: BatchOutline(sections: [.init(table: "t", ids: ["a", "b"])]))
            Issue.record("accepted an unknown result kind")
        } catch let error as DallyError {
            #expect(error.field == "results[0].rows[1][1]")
        }
        let negativeVersion = #"{"batch":"b","replayed":false,"changes":[],"results":[{"table":"t","rows":[["a","ok",-4]]}]}"#
        do {
            _ = try BatchAnswer.decode(json(negativeVersion), outline: BatchOutline(sections: [.init(table: "t", ids: ["a"])]))
            Issue.record("accepted a negative version")
        } catch let error as DallyError {
            #expect(error.field == "results[0].rows[0][2]")
        }
    }

    @Test func notifyRefusesATableNamedTwiceOrABadVersion() throws {
        do {
            _ = try NotifyAnswer.decode(json(#"{"versions":{"orders":1,"orders":2}}"#))
            Issue.record("accepted a table named twice")
        } catch let error as DallyError {
            #expect(error.field == "versions.orders")
        }
        do {
            _ = try NotifyAnswer.decode(json(#"{"versions":{"orders":-1}}"#))
            Issue.record("accepted a negative version")
        } catch let error as DallyError {
            #expect(error.field == "versions.orders")
        }
        do {
            _ = try NotifyAnswer.decode(json(#"{"other":{}}"#))
            Issue.record("accepted an answer without versions")
        } catch let error as DallyError {
            #expect(error.field == "versions")
        }
    }
}

@Suite("TableVersions query form")
struct TableVersionsQueryTests {
    @Test func parsesTableVersionPairsInOrder() throws {
        let versions = try TableVersions.parseQuery("orders:41,telemetry:0")
        #expect(versions == TableVersions([("orders", 41), ("telemetry", 0)]))
        #expect(versions.queryText == "orders:41,telemetry:0")
        #expect(try TableVersions.parseQuery(Substring(versions.queryText)) == versions)
    }

    @Test func emptyAndStrayCommasParseToWhatIsThere() throws {
        #expect(try TableVersions.parseQuery("").isEmpty)
        #expect(try TableVersions.parseQuery("a:1,,b:2,") == TableVersions([("a", 1), ("b", 2)]))
    }

    @Test(arguments: ["orders", "orders:", ":4", "orders:-1", "orders:x", "orders:4:5", "1abc:3", "a-b:1", "orders:1.5",
                      "orders:99999999999999999999"])
    func refusesWhatIsNotTableColonVersion(_ text: String) {
        do {
            let parsed = try TableVersions.parseQuery(Substring(text))
            Issue.record("accepted '\(text)' as \(parsed.queryText)")
        } catch {
            #expect(error.code == .badQuery)
            #expect(error.field == "versions")
        }
    }

    @Test func refusesATableNamedTwice() {
        do {
            _ = try TableVersions.parseQuery("a:1,b:2,a:3")
            Issue.record("accepted a table named twice")
        } catch {
            #expect(error.code == .badQuery)
            #expect(error.message.contains("'a'"))
        }
    }
}
