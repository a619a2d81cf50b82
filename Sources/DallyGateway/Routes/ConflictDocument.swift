import DallyCore
import DallyStore

/// A conflict record as `GET /v1/conflicts` lists it: `{"detected_at","error","id","kind",
/// "local","policy","server","status","table","winner"}`, the HTTP layer's rendering of the
/// store's ``ConflictRecord``. `policy`, `winner`, `server` and `error` appear when the record
/// has them; `local` is null when the local row is gone.
///
/// Written with ``JSONWriter``, members in name order as every document's, so that its rows read
/// as the row routes write them (a REAL `2.0`): through the document encoder they read `2`.
///
/// ```swift
/// var writer = JSONWriter()
/// ConflictDocument(record, schema: orders).write(to: &writer)
/// ```
struct ConflictDocument {
    let record: ConflictRecord
    /// The record's table's schema, which renders the local row.
    let schema: TableSchema

    init(_ record: ConflictRecord, schema: TableSchema) {
        self.record = record
        self.schema = schema
    }

    func write(to writer: inout JSONWriter) {
        writer.raw("{")
        writer.key("detected_at")
        writer.int(record.detectedAt)
        if let error = record.error {
            Self.next("error", &writer)
            writer.raw("{")
            writer.key("code")
            writer.string(error.code)
            if let field = error.field { Self.member("field", field, &writer) }
            Self.member("message", error.message, &writer)
            writer.raw("}")
        }
        Self.member("id", record.id, &writer)
        Self.member("kind", record.kind.rawValue, &writer)
        Self.next("local", &writer)
        if let local = record.local { local.write(to: &writer, schema: schema) } else { writer.null() }
        if let policy = record.policy { Self.member("policy", policy, &writer) }
        if let server = record.server {
            Self.next("server", &writer)
            writer.raw("{")
            writer.key("deleted")
            writer.bool(server.deleted)
            Self.next("updated_at", &writer)
            writer.int(server.updatedAt)
            // Stored as the cloud sent it; a record whose text no longer parses shows null.
            Self.next("values", &writer)
            writer.value((try? JSONParser.parse(server.valuesJSON)) ?? .null)
            Self.next("version", &writer)
            writer.int(server.version)
            writer.raw("}")
        }
        Self.member("status", record.status.rawValue, &writer)
        Self.member("table", record.table, &writer)
        if let winner = record.winner { Self.member("winner", winner, &writer) }
        writer.raw("}")
    }

    /// `,"key":`, a member after the first.
    private static func next(_ key: String, _ writer: inout JSONWriter) {
        writer.raw(",")
        writer.key(key)
    }

    private static func member(_ key: String, _ value: String, _ writer: inout JSONWriter) {
        next(key, &writer)
        writer.string(value)
    }
}
