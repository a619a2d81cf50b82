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
            writer.raw(",")
            writer.key("error")
            writer.raw("{")
            writer.key("code")
            writer.string(error.code)
            if let field = error.field {
                writer.raw(",")
                writer.key("field")
                writer.string(field)
            }
            writer.raw(",")
            writer.key("message")
            writer.string(error.message)
            writer.raw("}")
        }
        member("id", record.id, to: &writer)
        member("kind", record.kind.rawValue, to: &writer)
        writer.raw(",")
        writer.key("local")
        if let local = record.local { local.write(to: &writer, schema: schema) } else { writer.null() }
        if let policy = record.policy { member("policy", policy, to: &writer) }
        if let server = record.server {
            writer.raw(",")
            writer.key("server")
            writer.raw("{")
            writer.key("deleted")
            writer.bool(server.deleted)
            writer.raw(",")
            writer.key("updated_at")
            writer.int(server.updatedAt)
            writer.raw(",")
            writer.key("values")
            // Stored as the cloud sent it; a record whose text no longer parses shows null.
            writer.value((try? JSONParser.parse(server.valuesJSON)) ?? .null)
            writer.raw(",")
            writer.key("version")
            writer.int(server.version)
            writer.raw("}")
        }
        member("status", record.status.rawValue, to: &writer)
        member("table", record.table, to: &writer)
        if let winner = record.winner { member("winner", winner, to: &writer) }
        writer.raw("}")
    }

    private func member(_ key: String, _ value: String, to writer: inout JSONWriter) {
        writer.raw(",")
        writer.key(key)
        writer.string(value)
    }
}
