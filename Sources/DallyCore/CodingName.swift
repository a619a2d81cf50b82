/// A coding key that is any string: for JSON objects whose keys are data (table names,
/// counter names) and for documents that keep `null` members, which synthesized `Encodable`
/// conformances leave out.
///
/// ```swift
/// func encode(to encoder: any Encoder) throws {
///     var object = encoder.container(keyedBy: CodingName.self)
///     try object.encode(lastError, for: "last_error")      // null when nil
///     try object.encode(counters: [("cycles", 3), ("pulls", 1)])
/// }
/// ```
public struct CodingName: CodingKey, Sendable {
    public let stringValue: String
    public var intValue: Int? { nil }

    public init(_ name: String) { stringValue = name }
    public init(stringValue: String) { self.stringValue = stringValue }
    public init?(intValue: Int) { nil }
}

extension KeyedEncodingContainer where Key == CodingName {
    /// Encodes `value` under `name`; `null` when it is nil.
    public mutating func encode<T: Encodable>(_ value: T?, for name: String) throws {
        try encode(value, forKey: CodingName(name))
    }

    /// Encodes each counter as a member.
    public mutating func encode(counters: [(String, Int64)]) throws {
        for (name, value) in counters { try encode(value, forKey: CodingName(name)) }
    }

    /// Encodes `entries` as an object of their own under `name`.
    public mutating func encode<T: Encodable>(entries: [(String, T)], for name: String) throws {
        var object = nestedContainer(keyedBy: CodingName.self, forKey: CodingName(name))
        for (key, value) in entries { try object.encode(value, forKey: CodingName(key)) }
    }
}
