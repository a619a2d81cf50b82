/// A row as the replica holds it: values plus the metadata that sync needs.
public struct StoredRow: Sendable, Equatable {
    public let id: String
    /// The local sequence number of the row's latest change; also its ETag.
    public let seq: Int64
    /// The writer's clock of the latest change, in milliseconds since 1970.
    public let updatedAt: Int64
    public let deleted: Bool
    /// The cloud version of the row; nil while the row has changes the cloud has not accepted.
    public let version: Int64?
    /// Values in the table's column order.
    public let values: [Value]

    public init(id: String, seq: Int64, updatedAt: Int64, deleted: Bool, version: Int64?, values: [Value]) {
        self.id = id
        self.seq = seq
        self.updatedAt = updatedAt
        self.deleted = deleted
        self.version = version
        self.values = values
    }

    /// Writes the row as
    /// `{"id":…,"seq":…,"updated_at":…,"deleted":…,"version":…,"values":{…}}`, led by
    /// `"table":…` when `table` is given; a tombstone has empty values.
    public func write(to writer: inout JSONWriter, schema: TableSchema, table: String? = nil) {
        if let table {
            writer.raw("{\"table\":")
            writer.string(table)
            writer.raw(",\"id\":")
        } else {
            writer.raw("{\"id\":")
        }
        writer.string(id)
        writer.raw(",\"seq\":")
        writer.int(seq)
        writer.raw(",\"updated_at\":")
        writer.int(updatedAt)
        writer.raw(",\"deleted\":")
        writer.bool(deleted)
        writer.raw(",\"version\":")
        if let version { writer.int(version) } else { writer.null() }
        writer.raw(",\"values\":{")
        if !deleted {
            for (i, column) in schema.columns.enumerated() {
                if i > 0 { writer.raw(",") }
                writer.key(column.name)
                values[i].write(to: &writer)
            }
        }
        writer.raw("}}")
    }
}
