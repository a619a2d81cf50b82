import DallyCore

/// A row as the gateway stores it: the app's values, typed, and the metadata of its latest
/// change.
///
/// `Values` is the app's `Codable` type for the table's columns, keyed by column name (use
/// `CodingKeys` for names that differ); `JSONValue` reads any table.
///
/// For example:
/// ```swift
/// struct Order: Codable, Sendable { var customer: String; var total: Double; var paid: Bool? }
/// let row = try await client.table("orders", as: Order.self).get(id: "o1")
/// print(row?.values?.customer, row?.seq)   // seq: pass it back as `expectedSeq` to write safely
/// ```
public struct Row<Values: Decodable & Sendable>: Decodable, Sendable {
    /// The table, in a changes feed across tables; nil elsewhere.
    public let table: String?
    /// The app's id of the row.
    public let id: String
    /// The gateway's sequence number of the row's latest change: its version for
    /// `expectedSeq`, and the cursor of a changes feed.
    public let seq: Int64
    /// The writer's clock of the latest change, milliseconds since 1970.
    public let updatedAt: Int64
    /// A tombstone: the row was deleted (``values`` is nil).
    public let deleted: Bool
    /// The cloud's version; nil while the row has changes the cloud has not accepted.
    public let version: Int64?
    /// The columns, nil for a tombstone.
    public let values: Values?
    /// In a filtered changes feed (or one read with a scoped token): the row left the filter
    /// or scope — it is not deleted, but no longer yours to hold. It comes shaped as a
    /// tombstone (``deleted`` true, no values), so code that drops deleted rows drops it too.
    public let left: Bool

    private enum CodingKeys: String, CodingKey {
        case table, id, seq, deleted, version, values, left
        case updatedAt = "updated_at"
    }

    public init(from decoder: any Decoder) throws {
        let object = try decoder.container(keyedBy: CodingKeys.self)
        table = try object.decodeIfPresent(String.self, forKey: .table)
        id = try object.decode(String.self, forKey: .id)
        seq = try object.decode(Int64.self, forKey: .seq)
        updatedAt = try object.decode(Int64.self, forKey: .updatedAt)
        deleted = try object.decode(Bool.self, forKey: .deleted)
        version = try object.decodeIfPresent(Int64.self, forKey: .version)
        left = try object.decodeIfPresent(Bool.self, forKey: .left) ?? false
        // A tombstone's values are `{}`, which the app's type need not accept.
        values = deleted ? nil : try object.decode(Values.self, forKey: .values)
    }

    init(
        table: String?, id: String, seq: Int64, updatedAt: Int64, deleted: Bool, version: Int64?, values: Values?,
        left: Bool = false
    ) {
        self.left = left
        self.table = table
        self.id = id
        self.seq = seq
        self.updatedAt = updatedAt
        self.deleted = deleted
        self.version = version
        self.values = values
    }
}

extension Row: Encodable where Values: Encodable {
    /// Writes the row back in the gateway's shape (the command line prints rows this way).
    public func encode(to encoder: any Encoder) throws {
        var object = encoder.container(keyedBy: CodingName.self)
        if let table { try object.encode(table, for: "table") }
        try object.encode(id, for: "id")
        try object.encode(seq, for: "seq")
        try object.encode(updatedAt, for: "updated_at")
        try object.encode(deleted, for: "deleted")
        try object.encode(version, for: "version")
        if let values { try object.encode(values, for: "values") } else { try object.encode(JSONValue.object([]), for: "values") }
        if left { try object.encode(true, for: "left") }
    }
}

extension Row where Values == JSONValue {
    /// This row with its values read as `Other`: for a ``DallyClientError/versionMismatch(current:)``
    /// row, or a change from a feed across tables.
    ///
    /// For example: `let order = try current.decoded(as: Order.self).values`.
    public func decoded<Other: Decodable & Sendable>(as type: Other.Type) throws -> Row<Other> {
        let values = try self.values.map { try JSONCoding.convert($0, to: Other.self) }
        return Row<Other>(table: table, id: id, seq: seq, updatedAt: updatedAt, deleted: deleted, version: version, values: values,
            left: left)
    }
}
