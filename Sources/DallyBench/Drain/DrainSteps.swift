import DallyCore
import DallyStore
import DallySync
import Foundation

/// The steps `dally-bench drain` times, each as wall and CPU seconds over its rows.
enum DrainSteps {
    /// Time spent on `rows` rows, in wall and CPU seconds.
    struct Spent {
        var rows = 0
        var wall = 0.0
        var cpu = 0.0

        mutating func add(rows: Int, wall: Double, cpu: Double) {
            self.rows += rows
            self.wall += wall
            self.cpu += cpu
        }

        func cells(_ label: String) -> [String] {
            [
                label, String(rows), String(format: "%.2f", wall), String(format: "%.2f", cpu),
                rows > 0 && wall > 0 ? String(Int((Double(rows) / wall).rounded())) : "-",
                rows > 0 ? String(format: "%.1f", cpu * 1e6 / Double(rows)) : "-",
            ]
        }

        func resultLine(_ name: String) -> String {
            let rate = wall > 0 ? Int((Double(rows) / wall).rounded()) : 0
            return "RESULT \(name) rows=\(rows) wall_s=\(String(format: "%.3f", wall)) cpu_s=\(String(format: "%.3f", cpu))"
                + " rows_per_s=\(rate) cpu_us_per_row=\(String(format: "%.2f", rows > 0 ? cpu * 1e6 / Double(rows) : 0))"
        }
    }

    /// Runs `body`, adding its wall and CPU time to `spent` for `rows` rows.
    static func timed<T>(_ spent: inout Spent, rows: (T) -> Int, _ body: () async throws -> T) async rethrows -> T {
        let clock = ContinuousClock()
        let cpu = ProcessCPU.seconds
        let start = clock.now
        let value = try await body()
        let wall = clock.now - start
        spent.add(rows: rows(value), wall: wall.benchMilliseconds / 1000, cpu: ProcessCPU.seconds - cpu)
        return value
    }

    /// Writes `count` new rows through the store's batch writes, `perRequest` a call.
    static func write(_ count: Int, perRequest: Int, ids: BenchIDs, schema: TableSchema, store: ReplicaStore)
        async throws -> Spent
    {
        var maker = OrderBatches(
            gateway: "bench", replica: "bench", columns: schema.columns, rowsPerBatch: perRequest, updates: 0, ids: ids,
            seed: 0xD4A1)
        var spent = Spent()
        var left = count
        while left > 0 {
            let changes = maker.next().sections[0].changes.prefix(left)
            let writes = try changes.map { change in
                RowWrite(
                    id: change.id, kind: .put,
                    values: try zip(schema.columns, change.values).enumerated().map { index, pair in
                        (index, try Value(json: pair.1, for: pair.0))
                    }, updatedAt: nil, expectedSeq: nil)
            }
            let outcome = try await timed(&spent, rows: { (_: BatchOutcome) in writes.count }) {
                try await store.writeBatch(writes, table: schema.name, allOrNothing: true)
            }
            guard outcome.errors.isEmpty else {
                throw BenchError("write refused: \(outcome.errors.first.map { "\($0.id): \($0.error)" } ?? "")")
            }
            left -= writes.count
        }
        return spent
    }

    /// What the drain spent building batches and settling their answers.
    struct Drain {
        var build = Spent()
        var settle = Spent()
        var batches = 0
        var total: Spent {
            var both = build
            both.add(rows: 0, wall: settle.wall, cpu: settle.cpu)
            return both
        }
    }

    /// Sends the whole outbox, batch after batch, every row accepted at the next version.
    static func drain(store: ReplicaStore, gateway: String, rowsPerBatch: Int) async throws -> Drain {
        var drain = Drain()
        var version: Int64 = 0
        while let batch = try await timed(&drain.build, rows: { $0?.rows ?? 0 }, {
            try await store.nextBatch(gateway: gateway, maxRows: rowsPerBatch)
        }) {
            let request = try BatchRequest.decode(JSONParser.parse(batch.body), maxRows: .max)
            let answer = BatchAnswer(
                batchID: batch.batchID, replayed: false,
                results: request.sections.map { section in
                    .init(
                        table: section.table,
                        rows: section.changes.map { change in
                            version += 1
                            return .accepted(id: change.id, version: version)
                        })
                }, changes: [])
            let report = try await timed(&drain.settle, rows: { (_: SyncReport) in batch.rows }) {
                try await store.applyAnswer(answer)
            }
            guard report.accepted == batch.rows else {
                throw BenchError("batch \(batch.batchID): \(report.accepted) of \(batch.rows) rows settled")
            }
            drain.batches += 1
        }
        return drain
    }
}
