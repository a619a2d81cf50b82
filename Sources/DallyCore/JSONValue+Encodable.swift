import Foundation

extension JSONValue: Encodable {
    /// Encodes the value as it is, members in order: a document can carry a JSON value it
    /// holds (a row as it is now, a manifest) among typed members.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .bool(let value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case .int(let value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case .double(let value):
            var single = encoder.singleValueContainer()
            // JSON cannot carry NaN or infinities; JSONWriter writes them as null too.
            if value.isFinite { try single.encode(value) } else { try single.encodeNil() }
        case .number(let text):
            // Foundation's encoders write a Decimal's digits (up to 38 of them) as a number.
            var single = encoder.singleValueContainer()
            if let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) {
                try single.encode(decimal)
            } else {
                try single.encode(Double(text) ?? 0)
            }
        case .string(let value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case .array(let elements):
            var list = encoder.unkeyedContainer()
            for element in elements { try list.encode(element) }
        case .object(let members):
            var object = encoder.container(keyedBy: CodingName.self)
            for member in members { try object.encode(member.value, forKey: CodingName(member.key)) }
        }
    }
}
