import DallyCore

/// One TinySync entity checked against its table: the writes to apply, the rows refused
/// before any write, and the scope as equality filters.
///
/// The line between the two kinds of fault: what makes the request unreadable (an entry
/// without a valid `id`, an `updated_at` that is not a time, a scope the table cannot answer)
/// refuses the whole request with the place named, changing nothing; what is wrong with one
/// row's values (an unknown column, a value of the wrong type) refuses that row alone, in the
/// entity's `errors`, and the others are saved.
///
/// Field mapping: the entity object's `id` is the row id (24-hex ObjectIds fit), its
/// `updated_at` (ISO 8601, or milliseconds) the row's writer time, every other member a
/// column. An INTEGER column whose name ends in `_at` holds a time: it takes an ISO 8601
/// string (or milliseconds) and is answered as ISO 8601 (``TinySyncRecord``).
///
/// ```swift
/// let plan = try TinySyncEntityPlan(entity, schema: postSchema)
/// plan.writes.map(\.kind)   // [.put, .patch, .delete]
/// ```
struct TinySyncEntityPlan: Sendable {
    let entity: TinySyncEntity
    let schema: TableSchema
    let writes: [RowWrite]
    /// Rows refused for their values, with the id they carried.
    let refused: [(id: String, error: DallyError)]
    let filters: [(column: String, value: Value)]
    /// The caller's token scope on the table ([Scoped tokens] in API.md), nil for a token that
    /// reads the whole table: each write carries it, and the rows read are those of the
    /// filtered changes feed.
    let tokenScope: TypedScope?

    /// - Throws: ``DallyError`` `bad_request` or `invalid_id` naming the place, e.g.
    ///   `entities[0].created[2].updated_at`.
    init(_ entity: TinySyncEntity, schema: TableSchema, tokenScope: TypedScope? = nil) throws(DallyError) {
        self.entity = entity
        self.schema = schema
        self.tokenScope = tokenScope
        filters = try Self.filters(entity.scope ?? [], schema: schema, path: "\(entity.path).scope")
        var writes: [RowWrite] = []
        var refused: [(id: String, error: DallyError)] = []
        for (list, kind, rows) in [
            ("created", RowWrite.Kind.put, entity.created), ("updated", .patch, entity.updated),
        ] {
            for (index, row) in rows.enumerated() {
                let path = "\(entity.path).\(list)[\(index)]"
                let (id, updatedAt, members) = try Self.envelope(row, path: path)
                do throws(DallyError) {
                    let values = try Self.values(members, schema: schema)
                    writes.append(RowWrite(id: id, kind: kind, values: values, updatedAt: updatedAt, expectedSeq: nil))
                } catch {
                    refused.append((id, error))
                }
            }
        }
        for (index, entry) in entity.deleted.enumerated() {
            let path = "\(entity.path).deleted[\(index)]"
            let id: String
            switch entry {
            case .string(let text): id = try Self.rowID(text, path: path)
            // TinySync's Ruby server reads deleted entries as objects with an id; both are taken.
            case .object: id = try Self.envelope(entry, path: path).id
            default: throw DallyError(.badRequest, "a deleted entry is a row id string (or an object with \"id\")", field: path)
            }
            writes.append(RowWrite(id: id, kind: .delete, values: [], updatedAt: nil, expectedSeq: nil))
        }
        for index in writes.indices { writes[index].clientScope = tokenScope }
        self.writes = writes
        self.refused = refused
    }

    /// Whether a live row is in the entity's own scope (its columns equal the scope's values).
    func inEntityScope(_ row: StoredRow) -> Bool {
        let schema = self.schema
        return RowFilter(equalities: filters).matches { schema.columnIndex($0).map { row.values[$0] } }
    }

    private static func envelope(_ row: JSONValue, path: String) throws(DallyError)
        -> (id: String, updatedAt: Int64?, members: [JSONMember])
    {
        guard case .object(let members) = row else {
            throw DallyError(.badRequest, "a row must be an object with an \"id\" and its fields", field: path)
        }
        var id: String?
        var updatedAt: Int64?
        var fields: [JSONMember] = []
        for member in members {
            switch member.key {
            case "id":
                guard case .string(let text) = member.value else {
                    throw DallyError(.invalidID, "\"id\" must be a string (a 24-hex ObjectId, for one)", field: "\(path).id")
                }
                id = try rowID(text, path: path)
            case "updated_at":
                updatedAt = try time(member.value, field: "\(path).updated_at")
            default:
                fields.append(member)
            }
        }
        guard let id else { throw DallyError(.invalidID, "every row needs an \"id\"", field: "\(path).id") }
        return (id, updatedAt, fields)
    }

    private static func rowID(_ text: String, path: String) throws(DallyError) -> String {
        guard Identifier.isValidRowID(text) else {
            throw DallyError(
                .invalidID,
                "row id must be 1–\(Identifier.maxRowIDLength) characters of A–Z a–z 0–9 - _ . : ~ (a 24-hex ObjectId fits)",
                field: "\(path).id")
        }
        return text
    }

    /// An ISO 8601 string or milliseconds since 1970; nil for null.
    static func time(_ json: JSONValue, field: String) throws(DallyError) -> Int64? {
        switch json {
        case .null: return nil
        case .int(let millis) where millis >= 0:
            guard millis <= RowWrite.latestUpdatedAt else { throw DallyError.updatedAtTooLate(field) }
            return millis
        case .string(let text):
            if let millis = TinySyncTime.parse(text) { return millis }
        default: break
        }
        throw DallyError(
            .badRequest, "'\(field)' must be an ISO 8601 time such as 2014-02-17T17:23:54-0700", field: field)
    }

    private static func values(_ members: [JSONMember], schema: TableSchema) throws(DallyError) -> [(index: Int, value: Value)] {
        var values: [(index: Int, value: Value)] = []
        for member in members {
            guard let index = schema.columnIndex(member.key) else {
                throw DallyError(.unknownColumn, "table '\(schema.name)' has no column '\(member.key)'", field: member.key)
            }
            guard !values.contains(where: { $0.index == index }) else {
                throw DallyError(.badRequest, "field '\(member.key)' is given twice", field: member.key)
            }
            let column = schema.columns[index]
            if Self.isTime(column), case .string = member.value {
                let millis = try time(member.value, field: column.name)
                values.append((index, millis.map(Value.integer) ?? .null))
            } else {
                values.append((index, try Value(json: member.value, for: column)))
            }
        }
        return values.sorted { $0.index < $1.index }
    }

    /// Whether `column` holds a TinySync time: an INTEGER column named `…_at`.
    static func isTime(_ column: Column) -> Bool { column.type == .integer && column.name.hasSuffix("_at") }

    private static func filters(_ scope: [JSONMember], schema: TableSchema, path: String) throws(DallyError)
        -> [(column: String, value: Value)]
    {
        var filters: [(column: String, value: Value)] = []
        for condition in scope {
            let field = "\(path).\(condition.key)"
            guard let column = schema.column(named: condition.key) else {
                throw DallyError(
                    .badRequest, "the scope names '\(condition.key)', which is not a column of '\(schema.name)'", field: field)
            }
            guard ![.object, .json, .blob].contains(column.type) else {
                throw DallyError(
                    .badRequest,
                    "the scope cannot compare '\(column.name)', a \(column.type.rawValue) column; scope on TEXT, INTEGER, REAL or BOOLEAN columns",
                    field: field)
            }
            do throws(DallyError) {
                let value: Value
                if isTime(column), case .string = condition.value {
                    value = try time(condition.value, field: field).map(Value.integer) ?? .null
                } else {
                    value = try Value(json: condition.value, for: column)
                }
                filters.append((column.name, value))
            } catch {
                throw DallyError(.badRequest, error.message, field: field)
            }
        }
        return filters
    }
}
