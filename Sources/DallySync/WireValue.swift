import DallyCore
import Foundation

extension Value {
    /// The value as it travels in sync messages: as in the local API (BLOBs base64, JSON as
    /// JSON), and OBJECT columns as their reference text.
    public var wireJSON: JSONValue {
        switch self {
        case .null: .null
        case .integer(let i): .int(i)
        case .real(let d): .double(d)
        case .text(let s): .string(s)
        case .boolean(let b): .bool(b)
        case .blob(let bytes): .string(Data(bytes).base64EncodedString())
        // Stored JSON text was written by Dally from a parsed document, so it parses again.
        case .json(let text): (try? JSONParser.parse(text)) ?? .string(text)
        }
    }

    /// Reads a value received in a sync message for `column`.
    ///
    /// - Throws: ``DallyError`` `wrong_type` naming the column.
    public init(wire json: JSONValue, for column: Column) throws(DallyError) {
        if column.type == .object {
            switch json {
            case .null: self = .null
            case .string(let reference): self = .text(reference)
            default: throw .wrongType(column: column, got: json.typeName)
            }
        } else {
            try self.init(json: json, for: column)
        }
    }
}
