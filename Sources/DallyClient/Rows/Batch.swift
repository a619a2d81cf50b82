import DallyCore

/// Writes for ``Table/batch(_:)``: full rows to create or replace, partial rows to change,
/// ids to delete. The gateway checks every row and saves all that pass in one transaction
/// (or none, with ``allOrNothing``); at most the gateway's `limits.max_rows_per_batch` rows.
///
/// For example:
/// ```swift
/// var batch = Batch<Order>()
/// batch.create(id: "o3", Order(customer: "Bea", total: 3))
/// batch.update(id: "o2", ["paid": true], expectedSeq: 7)
/// batch.delete(id: "o1")
/// batch.allOrNothing = true
/// let result = try await orders.batch(batch)
/// ```
public struct Batch<Values: Encodable & Sendable>: Sendable {
    /// When true, one refused row saves nothing.
    public var allOrNothing = false
    private var created: [BatchEntry] = []
    private var updated: [BatchEntry] = []
    private var deleted: [BatchEntry] = []

    /// An empty batch; add writes with ``create(id:_:expectedSeq:updatedAt:)``, ``update(id:_:expectedSeq:updatedAt:)`` and ``delete(id:expectedSeq:)``.
    public init() {}

    /// The number of writes in the batch.
    public var count: Int { created.count + updated.count + deleted.count }

    /// Adds a create-or-replace of row `id` (as ``Table/put(id:_:expectedSeq:updatedAt:)``).
    public mutating func create(id: String, _ values: Values, expectedSeq: Int64? = nil, updatedAt: Int64? = nil) {
        created.append(BatchEntry(id: id, values: EncodableBox(values), updatedAt: updatedAt, expectedSeq: expectedSeq))
    }

    /// Adds a change of some columns of row `id` (as ``Table/patch(id:_:expectedSeq:updatedAt:)``).
    public mutating func update(id: String, _ changes: some Encodable & Sendable, expectedSeq: Int64? = nil, updatedAt: Int64? = nil) {
        updated.append(BatchEntry(id: id, values: EncodableBox(changes), updatedAt: updatedAt, expectedSeq: expectedSeq))
    }

    /// Adds a deletion of row `id` (as ``Table/delete(id:expectedSeq:)``).
    public mutating func delete(id: String, expectedSeq: Int64? = nil) {
        deleted.append(BatchEntry(id: id, values: nil, updatedAt: nil, expectedSeq: expectedSeq))
    }

    /// The request body, members in the order the gateway applies them: `created`, then
    /// `updated`, then `deleted` (Foundation's encoder does not keep the order members are
    /// written in, and here the order is the meaning). Each section is encoded through Codable.
    func body() throws -> [UInt8] {
        var writer = JSONWriter()
        writer.raw("{")
        for (name, entries) in [("created", created), ("updated", updated), ("deleted", deleted)] {
            writer.key(name)
            writer.rawText(String(decoding: try JSONCoding.encode(entries), as: UTF8.self))
            writer.raw(",")
        }
        writer.key("all_or_nothing")
        writer.bool(allOrNothing)
        writer.raw("}")
        return writer.bytes
    }
}
