import DallyCore
import DallyFrugal
import Testing

@Suite("FinalDataFloor")
struct FinalDataFloorTests {
    @Test func serializationIsCanonical() {
        let tables = [
            TraceTable(name: "b", columns: ["x INTEGER"], maxDelay: 1, networks: ["wifi"]),
            TraceTable(name: "a", columns: ["s TEXT", "v REAL"], maxDelay: 1, networks: ["wifi"]),
        ]
        let rows: [String: [String: TraceWrite]] = [
            "a": [
                "r2": TraceWrite(at: 5, client: 0, table: "a", id: "r2", values: ["hi", .double(1.5)]),
                "r1": TraceWrite(at: 7, client: 0, table: "a", id: "r1", values: [], deleted: true),
            ],
            "ignored": ["x": TraceWrite(at: 1, client: 0, table: "ignored", id: "x", values: [1])],
        ]
        let text = String(decoding: FinalDataFloor.serialize(rows, tables: tables, epochMillis: 1_000), as: UTF8.self)
        #expect(
            text == """
                {"table":"a","columns":["s TEXT","v REAL"]}
                ["r1",1007,true]
                ["r2",1005,false,"hi",1.5]
                {"table":"b","columns":["x INTEGER"]}

                """)
    }

    @Test func theTracesFinalDataCompressesWell() throws {
        let trace = FrugalTrace.generate(seed: 1)
        let sizes = try FinalDataFloor.zstd19Bytes(of: trace.finalRows(), tables: trace.tables)
        #expect(sizes.raw == FinalDataFloor.serialize(trace.finalRows(), tables: trace.tables).count)
        #expect(sizes.compressed > 0)
        #expect(sizes.compressed * 3 < sizes.raw)
        // Pinned: the trace and its serialization are deterministic.
        #expect(sizes.raw == TracePins.finalRaw)
        #expect(abs(sizes.compressed - TracePins.finalZstd19) * 50 <= TracePins.finalZstd19, "\(sizes.compressed)")
    }
}
