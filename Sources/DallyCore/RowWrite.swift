/// What a client asks to do to one row, validated against the table's schema.
///
/// Built from a request body by ``RowWrite/decode(_:id:kind:schema:)``; the store applies it.
public struct RowWrite: Sendable {
    public enum Kind: String, Sendable {
        /// Replace the whole row; columns not given become null. Creates the row if needed.
        case put
        /// Change only the given columns of an existing row.
        case patch
        /// Mark the row deleted (a tombstone) and clear its values.
        case delete
    }

    public let id: String
    public let kind: Kind
    /// The columns this write sets, as (column position, value), in declaration order.
    public let values: [(index: Int, value: Value)]
    /// The writer's clock in milliseconds since 1970, for last-writer-wins; nil means "now".
    public let updatedAt: Int64?
    /// The `seq` the writer last saw for this row; 0 means "the row must not exist". A
    /// mismatch refuses the write with `version_mismatch`.
    public let expectedSeq: Int64?
    /// Whether the row must exist (live) for the write to apply: `If-Match: *` (RFC 9110
    /// §13.1.1), a replace that never creates. Refused with `version_mismatch` otherwise.
    public var requiresExisting = false
    /// The scope of the client token writing, when it is pinned to one: the row as it is and
    /// as written must be in it. A row outside is answered as if it did not exist (PATCH,
    /// DELETE) or refused with `out_of_scope` (PUT), with nothing of it in the answer.
    public var clientScope: TypedScope?

    public init(id: String, kind: Kind, values: [(index: Int, value: Value)], updatedAt: Int64?, expectedSeq: Int64?) {
        self.id = id
        self.kind = kind
        self.values = values
        self.updatedAt = updatedAt
        self.expectedSeq = expectedSeq
    }

    /// The latest writer time a write may carry: 9999-12-31T23:59:59.999Z, the last instant ISO
    /// 8601's four-digit years can write. A later one would win every last-writer-wins conflict
    /// for ever, and no TinySync client could read it back.
    public static let latestUpdatedAt: Int64 = 253_402_300_799_999

    /// The members a write body may have besides `values`.
    static let envelopeKeys: Set<String> = ["id", "values", "updated_at", "expected_seq"]

    /// Validates a write body of the form
    /// `{"values": {"col": value, …}, "updated_at": ms, "expected_seq": n}` (all optional
    /// for a delete; `values` required otherwise).
    ///
    /// - Throws: ``DallyError`` `invalid_id`, `bad_request`, `unknown_column` or `wrong_type`,
    ///   with the offending field named.
    public static func decode(
        _ body: JSONValue?,
        id: String,
        kind: Kind,
        schema: TableSchema
    ) throws(DallyError) -> RowWrite {
        guard Identifier.isValidRowID(id) else { throw DallyError.invalidRowID(id) }
        guard let body else {
            guard kind == .delete else { throw DallyError(.badRequest, "a body with \"values\" is required", field: "values") }
            return RowWrite(id: id, kind: kind, values: [], updatedAt: nil, expectedSeq: nil)
        }
        guard case .object(let members) = body else {
            throw DallyError(.badRequest, "the body must be a JSON object, got \(body.typeName)")
        }
        var values: [(index: Int, value: Value)] = []
        var updatedAt: Int64?
        var expectedSeq: Int64?
        var sawValues = false
        var seen: Set<String> = []
        for member in members {
            guard seen.insert(member.key).inserted else {
                throw DallyError(.badRequest, "member '\(member.key)' is given twice", field: member.key)
            }
            switch member.key {
            case "values":
                sawValues = true
                values = try decodeValues(member.value, schema: schema)
            case "updated_at":
                updatedAt = try integer(member.value, field: "updated_at", minimum: 0)
                if let updatedAt, updatedAt > latestUpdatedAt { throw DallyError.updatedAtTooLate("updated_at") }
            case "expected_seq":
                expectedSeq = try integer(member.value, field: "expected_seq", minimum: 0)
            case "id":
                guard case .string(let bodyID) = member.value, bodyID == id else {
                    throw DallyError(.badRequest, "\"id\" in the body must match the id in the path", field: "id")
                }
            default:
                throw DallyError(
                    .badRequest,
                    "unknown member '\(member.key)'; a row write has \"values\", \"updated_at\" and \"expected_seq\"",
                    field: member.key
                )
            }
        }
        if kind == .delete {
            guard values.isEmpty else { throw DallyError(.badRequest, "a delete takes no values", field: "values") }
        } else if !sawValues {
            throw DallyError(.badRequest, "a body with \"values\" is required", field: "values")
        }
        return RowWrite(id: id, kind: kind, values: values, updatedAt: updatedAt, expectedSeq: expectedSeq)
    }

    static func decodeValues(_ json: JSONValue, schema: TableSchema) throws(DallyError) -> [(index: Int, value: Value)] {
        guard case .object(let members) = json else {
            throw DallyError(.badRequest, "\"values\" must be an object of column names to values", field: "values")
        }
        var result: [(index: Int, value: Value)] = []
        result.reserveCapacity(members.count)
        for member in members {
            guard let index = schema.columnIndex(member.key) else {
                throw DallyError(
                    .unknownColumn,
                    "table '\(schema.name)' has no column '\(member.key)'",
                    field: member.key
                )
            }
            if result.contains(where: { $0.index == index }) {
                throw DallyError(.badRequest, "column '\(member.key)' is given twice", field: member.key)
            }
            result.append((index, try Value(json: member.value, for: schema.columns[index])))
        }
        result.sort { $0.index < $1.index }
        return result
    }

    static func integer(_ json: JSONValue, field: String, minimum: Int64) throws(DallyError) -> Int64 {
        guard case .int(let value) = json, value >= minimum else {
            throw DallyError(.badRequest, "'\(field)' must be an integer ≥ \(minimum)", field: field)
        }
        return value
    }
}

extension DallyError {
    /// A writer time past ``RowWrite/latestUpdatedAt``.
    public static func updatedAtTooLate(_ field: String) -> DallyError {
        DallyError(
            .badRequest,
            "'\(field)' must be a time no later than 9999-12-31T23:59:59.999Z (\(RowWrite.latestUpdatedAt) ms since 1970)",
            field: field)
    }

    /// The error for a row id outside the accepted syntax.
    public static func invalidRowID(_ id: String) -> DallyError {
        DallyError(
            .invalidID,
            "row id must be 1–\(Identifier.maxRowIDLength) characters of A–Z a–z 0–9 - _ . : ~",
            field: "id"
        )
    }
}
