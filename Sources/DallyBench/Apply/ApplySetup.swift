import ArgumentParser
import DallyCore
import DallySync
import Foundation

/// What every part of `dally-bench apply` shares.
struct ApplySetup: Sendable {
    let root: String
    let columns: [String]
    let schema: TableSchema
    let rowsPerBatch: Int
    let batches: Int
    let updates: Double
    let ids: BenchIDs
    let synchronousFull: Bool
    let gateways: Int
    let level: Int
    let logLevel: String

    init(
        root: String, columns: [String], rowsPerBatch: Int, batches: Int, updates: Double, ids: BenchIDs,
        synchronousFull: Bool, gateways: Int, level: Int, logLevel: String
    ) throws {
        // The table as the cloud reads it from its configuration: checks the declarations.
        let probe = try BenchConfigs.cloud(
            directory: root + "/unused", gateways: 1, columns: columns, synchronousFull: synchronousFull,
            logLevel: logLevel)
        guard let schema = probe.tables.first else { throw BenchError("no table in the bench configuration") }
        (self.root, self.columns, self.schema) = (root, columns, schema)
        (self.rowsPerBatch, self.batches, self.updates, self.ids) = (rowsPerBatch, batches, updates, ids)
        (self.synchronousFull, self.gateways, self.level, self.logLevel) = (synchronousFull, gateways, level, logLevel)
    }

    /// Gateway `n`'s batch stream; the same `n` gives the same rows in every part.
    func maker(_ n: Int) -> OrderBatches {
        OrderBatches(
            gateway: BenchConfigs.gatewayID(n), replica: BenchConfigs.replicaID(n), columns: schema.columns,
            rowsPerBatch: rowsPerBatch, updates: updates, ids: ids, seed: 0xDA11 &+ UInt64(n) &* 0x1_0000_0001)
    }

    /// Gateway 0's `batches` batches, base versions as a fresh store gives them.
    func prebuiltBatches() -> [BatchRequest] {
        var maker = maker(0)
        return (0..<batches).map { _ in
            let batch = maker.next()
            maker.assumeAccepted(batch)
            return batch
        }
    }
}

extension BenchIDs: ExpressibleByArgument {}
