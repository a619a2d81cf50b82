import DallyCore
import DallyStore

/// A conflict record as `GET /v1/conflicts` lists it: `{"table","id","kind","status",
/// "detected_at","policy","winner","server","error","local"}`, the HTTP layer's rendering of
/// the store's ``ConflictRecord``. `policy`, `winner`, `server` and `error` appear when the
/// record has them; `local` is null when the local row is gone.
struct ConflictDocument: Encodable {
    let record: ConflictRecord
    /// The record's table's schema, which renders the local row.
    let schema: TableSchema

    init(_ record: ConflictRecord, schema: TableSchema) {
        self.record = record
        self.schema = schema
    }

    func encode(to encoder: any Encoder) throws {
        var object = encoder.container(keyedBy: CodingName.self)
        try object.encode(record.table, for: "table")
        try object.encode(record.id, for: "id")
        try object.encode(record.kind.rawValue, for: "kind")
        try object.encode(record.status.rawValue, for: "status")
        try object.encode(record.detectedAt, for: "detected_at")
        if let policy = record.policy { try object.encode(policy, for: "policy") }
        if let winner = record.winner { try object.encode(winner, for: "winner") }
        if let server = record.server {
            var side = object.nestedContainer(keyedBy: CodingName.self, forKey: CodingName("server"))
            try side.encode(server.version, for: "version")
            try side.encode(server.updatedAt, for: "updated_at")
            try side.encode(server.deleted, for: "deleted")
            // Stored as the cloud sent it; a record whose text no longer parses shows null.
            try side.encode((try? JSONParser.parse(server.valuesJSON)) ?? .null, for: "values")
        }
        if let error = record.error {
            var body = object.nestedContainer(keyedBy: CodingName.self, forKey: CodingName("error"))
            try body.encode(error.code, for: "code")
            try body.encode(error.message, for: "message")
            if let field = error.field { try body.encode(field, for: "field") }
        }
        try object.encode(record.local.map { $0.json(schema: schema) }, for: "local")
    }
}
