/// The type of a table column, as declared in the configuration.
///
/// Every type maps to one SQLite storage class in the replica and to one JSON shape on the
/// wire; ``Value`` carries a value of any of them.
public enum ColumnType: String, Sendable, CaseIterable, Codable {
    /// UTF-8 text. JSON string.
    case text = "TEXT"
    /// 64-bit signed integer. JSON number without fraction.
    case integer = "INTEGER"
    /// 64-bit float. JSON number.
    case real = "REAL"
    /// `true` or `false`. Stored as 0 or 1.
    case boolean = "BOOLEAN"
    /// Bytes. On the JSON wire a base64 string.
    case blob = "BLOB"
    /// Any JSON value, stored as its compact text.
    case json = "JSON"
    /// A reference to a large object stored in chunks. Written through the objects API.
    case object = "OBJECT"

    /// Parses a type name as written in the configuration, ignoring case.
    public init?(declared name: String) {
        self.init(rawValue: name.uppercased())
    }
}

/// One column of a table: its name and type.
public struct Column: Sendable, Hashable {
    public let name: String
    public let type: ColumnType

    public init(name: String, type: ColumnType) {
        self.name = name
        self.type = type
    }
}
