import DallyCore
import DallyStore

/// A conflict record as `GET /v1/conflicts` lists it: the HTTP layer's rendering of the
/// store's ``ConflictRecord``.
extension ConflictRecord {
    /// `{"table","id","kind","status","detected_at","policy","winner","server","error","local"}`.
    func write(to writer: inout JSONWriter, schema: TableSchema) {
        writer.raw("{\"table\":")
        writer.string(table)
        writer.raw(",\"id\":")
        writer.string(id)
        writer.raw(",\"kind\":")
        writer.string(kind.rawValue)
        writer.raw(",\"status\":")
        writer.string(status.rawValue)
        writer.raw(",\"detected_at\":")
        writer.int(detectedAt)
        if let policy {
            writer.raw(",\"policy\":")
            writer.string(policy)
        }
        if let winner {
            writer.raw(",\"winner\":")
            writer.string(winner)
        }
        if let server {
            writer.raw(",\"server\":{\"version\":")
            writer.int(server.version)
            writer.raw(",\"updated_at\":")
            writer.int(server.updatedAt)
            writer.raw(",\"deleted\":")
            writer.bool(server.deleted)
            writer.raw(",\"values\":")
            writer.rawText(server.valuesJSON)
            writer.raw("}")
        }
        if let error {
            writer.raw(",\"error\":{\"code\":")
            writer.string(error.code)
            writer.raw(",\"message\":")
            writer.string(error.message)
            if let field = error.field {
                writer.raw(",\"field\":")
                writer.string(field)
            }
            writer.raw("}")
        }
        writer.raw(",\"local\":")
        if let local { local.write(to: &writer, schema: schema) } else { writer.null() }
        writer.raw("}")
    }
}
