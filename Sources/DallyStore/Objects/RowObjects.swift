import DallyCore
import DallyObjects
import GRDB

/// What writing a row does about its `OBJECT` columns, inside the row's transaction: a local
/// write may only name objects this gateway holds whole, and every write keeps the row's refs
/// and the upload and download queues in step with the row.
///
/// Most tables have no `OBJECT` column and skip all of it (``hasObjects(_:)``).
enum RowObjects {
    typealias Refs = [(column: String, reference: ObjectReference)]

    static func hasObjects(_ schema: TableSchema) -> Bool {
        schema.columns.contains { $0.type == .object }
    }

    /// Turns what a local write puts in an `OBJECT` column (a requested hash, see
    /// `Value(json:for:)`, or a full reference) into the reference of the object this gateway
    /// holds, with its size and chunk count from `dally_objects` rather than from the client.
    ///
    /// - Throws: ``DallyError`` `unknown_object` naming the hash and the column when the object
    ///   is not here whole, `wrong_type` when the value is not a reference.
    static func resolve(_ value: Value, column: DallyCore.Column, db: Database) throws -> Value {
        let text: String
        switch value {
        case .null: return .null
        case .json(let t), .text(let t): text = t
        default: throw DallyError.wrongType(column: column, got: "a value that is not an object reference")
        }
        let hash = try ObjectReference.requestedHash((try? JSONParser.parse(text)) ?? .null, field: column.name)
        guard let record = try ObjectLedger.record(hash, db: db), record.servable != nil else {
            throw DallyError(
                .unknownObject,
                "column '\(column.name)' names object \(hash.hex), which this gateway does not hold; upload it first with POST /v1/objects",
                field: column.name)
        }
        return .json(record.reference.jsonText)
    }

    /// The references `values` hold, by column, each value rewritten as its reference's
    /// canonical text. A value that is not a reference (written by something other than
    /// Dally) is left as it is and references nothing.
    static func references(_ values: inout [Value], schema: TableSchema) -> Refs {
        var refs: Refs = []
        for (index, column) in schema.columns.enumerated() where column.type == .object {
            let text: String
            switch values[index] {
            case .json(let t), .text(let t): text = t
            default: continue
            }
            guard let reference = ObjectReference(jsonText: text) else { continue }
            values[index] = .json(reference.jsonText)
            refs.append((column.name, reference))
        }
        return refs
    }

    /// After a local write: the row's refs are `refs`; in a synced table, each object the
    /// cloud may lack is queued for upload under this table's object policy.
    static func trackLocal(_ refs: Refs, table: TableSchema, rowID: String, now: Int64, db: Database) throws {
        try ObjectLedger.setReferences(table: table.name, rowID: rowID, refs, db: db)
        guard !table.policy.localOnly else { return }
        for ref in refs { try ObjectLedger.queueUpload(ref.reference.hash, table: table.name, now: now, db: db) }
    }

    /// After writing a row from the cloud: objects not known here are recorded as held by the
    /// cloud, and — unless the table fetches objects on demand — queued for download when they
    /// are not here; the row's refs are `refs`.
    static func trackDownstream(_ refs: Refs, table: TableSchema, rowID: String, now: Int64, db: Database) throws {
        for ref in refs {
            try ObjectLedger.recordRemote(ref.reference, now: now, db: db)
            if !table.policy.downloadObjects.onDemand {
                try ObjectLedger.queueDownload(ref.reference.hash, table: table.name, now: now, db: db)
            }
        }
        try ObjectLedger.setReferences(table: table.name, rowID: rowID, refs, db: db)
    }
}
