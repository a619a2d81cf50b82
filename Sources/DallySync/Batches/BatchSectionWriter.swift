import DallyCore

/// Writes one table's section of a batch body (PROTOCOL.md §4.1) row by row, as the rows are
/// read: the one place the section's wire form is spelled, for ``BatchRequest/encode()`` and
/// for a sender that writes rows straight from its storage.
///
/// The gateway's replica writes each pending row's columns from SQLite into the section as it
/// steps (no ``BatchRequest/Change`` and no ``JSONValue`` per row): a drain builds a batch of
/// thousands of rows at a time, and without the values made on the way the build cost 7 % less
/// (docs/BENCHMARKS.md, "Deleted by stretch, written as read").
///
/// ```swift
/// var section = BatchSectionWriter(table: "orders", columns: ["customer", "qty"])
/// section.beginRow(id: "o1", baseVersion: nil, updatedAt: 1_700_000_000_000, deleted: false)
/// section.value(.string("Ada"))
/// section.value { $0.int(3) }
/// section.endRow()
/// let body = BatchRequest(batchID: "b1", gateway: "g", replica: "r", since: TableVersions([]), sections: [])
///     .encode(writtenSections: [section])
/// ```
public struct BatchSectionWriter: Sendable {
    public let table: String
    /// The ids of the rows written so far, in order: the section's part of the batch's outline.
    public private(set) var ids: [String] = []
    private var json: JSONWriter

    /// - Parameter expectedRows: how many rows to reserve room for (about 64 bytes each).
    public init(table: String, columns: [String], expectedRows: Int = 0) {
        self.table = table
        json = JSONWriter(capacity: 64 + expectedRows * 64)
        json.raw("{\"table\":")
        json.string(table)
        json.raw(",\"columns\":[")
        for (i, column) in columns.enumerated() {
            if i > 0 { json.raw(",") }
            json.string(column)
        }
        json.raw("],\"rows\":[")
        ids.reserveCapacity(expectedRows)
    }

    /// The section of `section`'s changes.
    public init(_ section: BatchRequest.Section) {
        self.init(table: section.table, columns: section.columns, expectedRows: section.changes.count)
        for change in section.changes {
            beginRow(id: change.id, baseVersion: change.baseVersion, updatedAt: change.updatedAt, deleted: change.deleted)
            if !change.deleted {
                for value in change.values { self.value(value) }
            }
            endRow()
        }
    }

    public var rows: Int { ids.count }

    /// The section's part of its batch's outline.
    public var outline: BatchOutline.Section { BatchOutline.Section(table: table, ids: ids) }

    /// The bytes written so far.
    var byteCount: Int { json.bytes.count + 2 }

    /// Starts a row: `[id, base_version, updated_at, op`. A put's values follow, one per
    /// column in order (``value(_:)-swift.method``); a delete has none.
    public mutating func beginRow(id: String, baseVersion: Int64?, updatedAt: Int64, deleted: Bool) {
        json.raw(ids.isEmpty ? "[" : ",[")
        ids.append(id)
        json.string(id)
        json.raw(",")
        if let baseVersion { json.int(baseVersion) } else { json.null() }
        json.raw(",")
        json.int(updatedAt)
        json.raw(deleted ? ",\"delete\"" : ",\"put\"")
    }

    /// Appends the row's next value.
    public mutating func value(_ value: JSONValue) {
        json.raw(",")
        json.value(value)
    }

    /// Appends the row's next value, written by `write` as one JSON value.
    public mutating func value(_ write: (inout JSONWriter) -> Void) {
        json.raw(",")
        write(&json)
    }

    public mutating func endRow() {
        json.raw("]")
    }

    /// Appends the section's JSON object to `writer`.
    func append(to writer: inout JSONWriter) {
        writer.rawBytes(json.bytes)
        writer.raw("]}")
    }
}
