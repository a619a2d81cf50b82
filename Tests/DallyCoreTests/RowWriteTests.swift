import DallyCore
import Testing

private let schema = TableSchema(
    name: "orders",
    columns: [
        Column(name: "customer", type: .text),
        Column(name: "total", type: .real),
        Column(name: "paid", type: .boolean),
        Column(name: "qty", type: .integer),
        Column(name: "receipt", type: .object),
    ],
    conflict: .lastWriterWins,
    policy: SyncPolicy(
        localOnly: false, atomicSync: false,
        uploadRows: UploadPolicy(maxDelay: .seconds(60), networks: ["wired"]),
        uploadObjects: UploadPolicy(maxDelay: .seconds(600), networks: ["wired"]),
        downloadRows: DownloadPolicy(period: .seconds(60), networks: ["wired"]),
        downloadObjects: DownloadPolicy(period: .seconds(600), networks: ["wired"])
    )
)

private func decode(_ body: String?, id: String = "order-1", kind: RowWrite.Kind) throws -> RowWrite {
    let json = try body.map { text throws(JSONParseError) in try JSONParser.parse(text) }
    return try RowWrite.decode(json, id: id, kind: kind, schema: schema)
}

/// Decodes and returns the DallyError thrown, or nil on success.
private func decodeError(_ body: String?, id: String = "order-1", kind: RowWrite.Kind) throws -> DallyError? {
    let json = try body.map { text throws(JSONParseError) in try JSONParser.parse(text) }
    do {
        _ = try RowWrite.decode(json, id: id, kind: kind, schema: schema)
        return nil
    } catch {
        return error
    }
}

@Suite("RowWrite.decode: valid writes")
struct RowWriteValidTests {
    @Test func putWithAllEnvelopeMembers() throws {
        let write = try decode(
            #"{"id":"order-1","values":{"customer":"Ada","total":12},"updated_at":1700000000000,"expected_seq":3}"#,
            kind: .put
        )
        #expect(write.id == "order-1")
        #expect(write.kind == .put)
        #expect(write.values.map(\.index) == [0, 1])
        #expect(write.values.map(\.value) == [.text("Ada"), .real(12)])
        #expect(write.updatedAt == 1_700_000_000_000)
        #expect(write.expectedSeq == 3)
    }

    @Test func putWithOnlyValues() throws {
        let write = try decode(#"{"values":{"paid":true}}"#, kind: .put)
        #expect(write.values.map(\.index) == [2])
        #expect(write.values.map(\.value) == [.boolean(true)])
        #expect(write.updatedAt == nil)
        #expect(write.expectedSeq == nil)
    }

    @Test func putWithEmptyValuesIsAllowed() throws {
        let write = try decode(#"{"values":{}}"#, kind: .put)
        #expect(write.values.isEmpty)
    }

    @Test func patchWithNullValue() throws {
        let write = try decode(#"{"values":{"qty":null,"customer":"B"},"expected_seq":0}"#, kind: .patch)
        #expect(write.kind == .patch)
        #expect(write.values.map(\.index) == [0, 3])
        #expect(write.values.map(\.value) == [.text("B"), .null])
        #expect(write.expectedSeq == 0)
    }

    @Test func valuesAreSortedByColumnIndex() throws {
        let write = try decode(#"{"values":{"qty":2.0,"paid":false,"total":1.5,"customer":"c"}}"#, kind: .put)
        #expect(write.values.map(\.index) == [0, 1, 2, 3])
        #expect(write.values.map(\.value) == [.text("c"), .real(1.5), .boolean(false), .integer(2)])
    }

    @Test func deleteWithoutBody() throws {
        let write = try decode(nil, kind: .delete)
        #expect(write.kind == .delete)
        #expect(write.id == "order-1")
        #expect(write.values.isEmpty)
        #expect(write.updatedAt == nil)
        #expect(write.expectedSeq == nil)
    }

    @Test func deleteWithEnvelope() throws {
        let write = try decode(#"{"expected_seq":12,"updated_at":0}"#, kind: .delete)
        #expect(write.values.isEmpty)
        #expect(write.expectedSeq == 12)
        #expect(write.updatedAt == 0)
    }

    @Test func deleteWithEmptyValues() throws {
        #expect(try decode(#"{"values":{}}"#, kind: .delete).values.isEmpty)
    }

    @Test(arguments: [
        "a", "0", String(repeating: "x", count: 128), "550e8400-e29b-41d4-a716-446655440000", "01ARZ3NDEKTSV4RRFFQ69G5FAV",
        "a.b:c~d-e_f", "UPPER_lower.123",
    ])
    func validRowIDs(_ id: String) throws {
        let write = try decode(nil, id: id, kind: .delete)
        #expect(write.id == id)
    }
}

@Suite("RowWrite.decode: refusals")
struct RowWriteRefusalTests {
    @Test(arguments: ["", String(repeating: "x", count: 129), "a/b", "a b", "a%20b", "a\"b", "é", "a?b", "a#b"])
    func invalidRowIDs(_ id: String) throws {
        for kind in [RowWrite.Kind.put, .patch, .delete] {
            let error = try #require(try decodeError(#"{"values":{}}"#, id: id, kind: kind))
            #expect(error.code == .invalidID)
            #expect(error.field == "id")
            #expect(error.message.contains("128"))
        }
    }

    @Test func invalidIDIsReportedBeforeAnythingElse() throws {
        let error = try #require(try decodeError(#"{"bogus":1}"#, id: "a/b", kind: .put))
        #expect(error.code == .invalidID)
    }

    @Test func unknownColumn() throws {
        let error = try #require(try decodeError(#"{"values":{"customer":"a","colour":"red"}}"#, kind: .put))
        #expect(error.code == .unknownColumn)
        #expect(error.field == "colour")
        #expect(error.message == "table 'orders' has no column 'colour'")
    }

    @Test func columnNamesAreCaseSensitive() throws {
        let error = try #require(try decodeError(#"{"values":{"Customer":"a"}}"#, kind: .patch))
        #expect(error.code == .unknownColumn)
        #expect(error.field == "Customer")
    }

    @Test func metadataIsNotAColumn() throws {
        let error = try #require(try decodeError(#"{"values":{"seq":1}}"#, kind: .put))
        #expect(error.code == .unknownColumn)
        #expect(error.field == "seq")
    }

    @Test func columnGivenTwice() throws {
        let error = try #require(try decodeError(#"{"values":{"qty":1,"qty":2}}"#, kind: .put))
        #expect(error.code == .badRequest)
        #expect(error.field == "qty")
        #expect(error.message.contains("twice"))
    }

    @Test func wrongTypeInValues() throws {
        let error = try #require(try decodeError(#"{"values":{"qty":"three"}}"#, kind: .put))
        #expect(error.code == .wrongType)
        #expect(error.field == "qty")
        #expect(error.message.contains("INTEGER"))
    }

    @Test func objectColumnInValuesMustNameAHash() throws {
        let error = try #require(try decodeError(#"{"values":{"receipt":"abc"}}"#, kind: .patch))
        #expect(error.code == .wrongType)
        #expect(error.field == "receipt")
        #expect(error.message.contains("POST /v1/objects"))
    }

    @Test(arguments: ["etag", "value", "Values", "deleted", "seq"])
    func unknownEnvelopeMember(_ member: String) throws {
        let error = try #require(try decodeError(#"{"values":{},"\#(member)":1}"#, kind: .put))
        #expect(error.code == .badRequest)
        #expect(error.field == member)
        #expect(error.message.contains("unknown member '\(member)'"))
    }

    @Test(arguments: [RowWrite.Kind.put, .patch])
    func missingValues(_ kind: RowWrite.Kind) throws {
        for body in [nil, "{}", #"{"expected_seq":1}"#] as [String?] {
            let error = try #require(try decodeError(body, kind: kind), "body \(String(describing: body))")
            #expect(error.code == .badRequest)
            #expect(error.field == "values")
            #expect(error.message.contains("\"values\""))
        }
    }

    @Test(arguments: [#"[]"#, #""x""#, "1", "null"])
    func bodyMustBeAnObject(_ body: String) throws {
        let error = try #require(try decodeError(body, kind: .put))
        #expect(error.code == .badRequest)
        #expect(error.message.contains("must be a JSON object"))
    }

    @Test(arguments: [#"[]"#, #""x""#, "1", "null"])
    func valuesMustBeAnObject(_ values: String) throws {
        let error = try #require(try decodeError(#"{"values":\#(values)}"#, kind: .put))
        #expect(error.code == .badRequest)
        #expect(error.field == "values")
    }

    @Test func deleteTakesNoValues() throws {
        let error = try #require(try decodeError(#"{"values":{"qty":1}}"#, kind: .delete))
        #expect(error.code == .badRequest)
        #expect(error.field == "values")
        #expect(error.message.contains("delete"))
    }

    @Test(arguments: ["expected_seq", "updated_at"], ["-1", "1.5", "1.0", "\"3\"", "null", "true", "[1]", "-9223372036854775808"])
    func envelopeIntegersMustBeNonNegativeIntegers(_ member: String, _ value: String) throws {
        for kind in [RowWrite.Kind.put, .delete] {
            let body = kind == .delete ? #"{"\#(member)":\#(value)}"# : #"{"values":{},"\#(member)":\#(value)}"#
            let error = try #require(try decodeError(body, kind: kind), "\(body)")
            #expect(error.code == .badRequest)
            #expect(error.field == member)
            #expect(error.message.contains("integer ≥ 0"))
        }
    }

    @Test func envelopeIntegersAcceptZeroAndTheirLargest() throws {
        let first = try decode(#"{"values":{},"expected_seq":0,"updated_at":0}"#, kind: .put)
        #expect(first.expectedSeq == 0)
        #expect(first.updatedAt == 0)
        let last = try decode(#"{"values":{},"expected_seq":9223372036854775807,"updated_at":253402300799999}"#, kind: .put)
        #expect(last.expectedSeq == Int64.max)
        #expect(last.updatedAt == RowWrite.latestUpdatedAt)
    }

    @Test(arguments: ["253402300800000", "9223372036854775807"])
    func aWriterTimePastYear9999IsRefused(_ value: String) throws {
        let error = try #require(try decodeError(#"{"values":{},"updated_at":\#(value)}"#, kind: .put))
        #expect(error.code == .badRequest)
        #expect(error.field == "updated_at")
        #expect(error.message.contains("9999-12-31T23:59:59.999Z"))
    }

    @Test(arguments: [#""order-2""#, #""ORDER-1""#, #""""#, "1", "null"])
    func idInBodyMustMatchPath(_ bodyID: String) throws {
        let error = try #require(try decodeError(#"{"id":\#(bodyID),"values":{}}"#, id: "order-1", kind: .put))
        #expect(error.code == .badRequest)
        #expect(error.field == "id")
        #expect(error.message.contains("must match"))
    }

    @Test func matchingIDInBodyIsAccepted() throws {
        #expect(try decode(#"{"id":"order-1"}"#, kind: .delete).id == "order-1")
    }

    @Test func errorDescriptionNamesCodeAndField() throws {
        let error = try #require(try decodeError(#"{"values":{"nope":1}}"#, kind: .put))
        #expect(error.description == "unknown_column (nope): table 'orders' has no column 'nope'")
    }
}

@Suite struct RowWriteDuplicateMemberTests {
    /// A member given twice would otherwise be decided silently by the last one.
    @Test(arguments: [
        #"{"values":{"qty":1},"values":{}}"#,
        #"{"values":{},"expected_seq":1,"expected_seq":2}"#,
    ])
    func aDuplicateEnvelopeMemberIsRefused(_ body: String) throws {
        let error = try #require(try decodeError(body, kind: .put))
        #expect(error.code == .badRequest)
        #expect(error.message.contains("given twice"))
    }
}
