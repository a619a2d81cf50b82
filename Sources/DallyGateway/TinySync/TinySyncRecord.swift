import DallyCore
import Foundation

/// A row as a TinySync answer carries it: flat, its fields beside `id` and `updated_at`.
///
/// ```json
/// {"id": "521fa720594cc48c1d000042", "updated_at": "2014-03-03T02:24:54.000Z",
///  "author_id": "52212589594cc44541000016", "body": "A post that was saved on the server"}
/// ```
/// `updated_at` is the row's writer time in ISO 8601 (UTC, milliseconds), and so is every
/// INTEGER column named `…_at` (``TinySyncEntityPlan/isTime(_:)``); BLOBs are base64, JSON
/// columns their JSON, OBJECT columns their reference (`{"hash","size","chunks"}`).
struct TinySyncRecord: Encodable {
    let row: StoredRow
    let schema: TableSchema

    func encode(to encoder: any Encoder) throws {
        var object = encoder.container(keyedBy: CodingName.self)
        try object.encode(row.id, for: "id")
        // A time no four-digit year writes (stored before writes were bounded) goes as its number.
        try object.encode(TinySyncTime.json(row.updatedAt), for: "updated_at")
        for (column, value) in zip(schema.columns, row.values) {
            try object.encode(Self.json(value, column: column), for: column.name)
        }
    }

    static func json(_ value: Value, column: Column) -> JSONValue {
        switch value {
        case .null: .null
        case .integer(let i): TinySyncEntityPlan.isTime(column) ? TinySyncTime.json(i) : .int(i)
        case .real(let d): .double(d)
        case .text(let s): .string(s)
        case .boolean(let b): .bool(b)
        case .blob(let bytes): .string(Data(bytes).base64EncodedString())
        // Stored as compact JSON text by Dally itself; text that no longer parses is sent as a string.
        case .json(let text): (try? JSONParser.parse(text)) ?? .string(text)
        }
    }
}
