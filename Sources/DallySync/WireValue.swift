import DallyCore
import DallyObjects
import Foundation

extension Value {
    /// The value as it travels in sync messages: as in the local API (BLOBs base64, JSON as
    /// JSON), and OBJECT columns as their reference, `{"hash", "size", "chunks"}` (stored as
    /// its JSON text, so it is written back as the same object).
    public var wireJSON: JSONValue {
        switch self {
        case .null: .null
        case .integer(let i): .int(i)
        case .real(let d): .double(d)
        case .text(let s): .string(s)
        case .boolean(let b): .bool(b)
        case .blob(let bytes): .string(Data(bytes).base64EncodedString())
        // Stored JSON text was written by Dally from a parsed document, so it parses again;
        // an OBJECT column's text from before references were JSON goes out as the string.
        case .json(let text): (try? JSONParser.parse(text)) ?? .string(text)
        }
    }

    /// Reads a value received in a sync message for `column`.
    ///
    /// An OBJECT column takes a reference object, checked and kept as its canonical JSON text
    /// (so that the cloud can find the hash in it and serve it back as an object), or a string
    /// as gateways sent before references were objects.
    ///
    /// - Throws: ``DallyError`` `wrong_type` naming the column.
    public init(wire json: JSONValue, for column: Column) throws(DallyError) {
        if column.type == .object {
            switch json {
            case .null: self = .null
            case .object: self = .json(try ObjectReference(json: json, field: column.name).jsonText)
            case .string(let reference): self = .text(reference)
            default: throw .wrongType(column: column, got: json.typeName)
            }
        } else if column.type == .json {
            // As sent: a value nested deeper than a client may write now (``Value/maxJSONNesting``),
            // stored before that bound, still travels.
            self = json == .null ? .null : .json(json.jsonText)
        } else {
            try self.init(json: json, for: column)
        }
    }

    /// The object this OBJECT column value references, or nil when it holds none (null, or a
    /// string that is not a reference).
    public var objectReference: ObjectReference? {
        switch self {
        case .json(let text), .text(let text): ObjectReference(jsonText: text)
        default: nil
        }
    }
}
