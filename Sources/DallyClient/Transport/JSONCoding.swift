import DallyCore
import Foundation

/// The library's one JSON encoder and decoder, and the mapping of a body that does not decode
/// to ``DallyClientError/invalidAnswer(_:)``.
enum JSONCoding {
    static func encode(_ value: some Encodable) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return Array(try encoder.encode(value))
    }

    static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8], what: String) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: Data(bytes))
        } catch {
            let text = String(decoding: bytes.prefix(200), as: UTF8.self)
            throw DallyClientError.invalidAnswer("\(what): \(error) in \(text)")
        }
    }

    /// A value the gateway sent as JSON, read as the app's type.
    static func convert<T: Decodable>(_ value: JSONValue, to type: T.Type) throws -> T {
        try JSONDecoder().decode(type, from: Data(try encode(value)))
    }
}
