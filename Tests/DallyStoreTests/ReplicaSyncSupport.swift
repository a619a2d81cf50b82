import DallyCore
import DallySync
import Testing

@testable import DallyStore

/// The request a batch's body encodes, decoded as the cloud would.
func sentRequest(_ batch: OutgoingBatch) throws -> BatchRequest {
    try BatchRequest.decode(JSONParser.parse(batch.body), maxRows: 100_000)
}

/// An answer to `batch` with one section of results for `table`.
func replicaAnswer(
    _ batch: OutgoingBatch, table: String = "orders", _ rows: [BatchAnswer.RowResult], changes: [ChangePage] = [],
    replayed: Bool = false
) -> BatchAnswer {
    BatchAnswer(
        batchID: batch.batchID, replayed: replayed, results: [BatchAnswer.SectionResult(table: table, rows: rows)],
        changes: changes)
}

/// A cloud row of `orders` as it travels: values in the schema's order.
func ordersRow(_ id: String, version: Int64, at updatedAt: Int64 = 5, _ values: [JSONValue], deleted: Bool = false)
    -> ChangePage.ChangedRow
{
    ChangePage.ChangedRow(id: id, version: version, updatedAt: updatedAt, deleted: deleted, values: deleted ? [] : values)
}

func ordersPage(since: Int64 = 0, version: Int64, more: Bool = false, _ rows: [ChangePage.ChangedRow]) -> ChangePage {
    ChangePage(
        table: "orders", columns: ["customer", "total", "paid"], since: since, version: version, more: more, rows: rows)
}
