import Foundation
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

    @Test func anObjectIsItsSizeAndAStandInHashAndCountsOnce() {
        let table = TraceTable(name: "p", columns: ["c TEXT", "img OBJECT"], maxDelay: 1, networks: ["wifi"])
        let image = TraceObject(size: 1_000, seed: 7)
        let rows: [String: [String: TraceWrite]] = [
            "p": [
                "a": TraceWrite(at: 1, client: 0, table: "p", id: "a", values: ["x", .null], object: image),
                "b": TraceWrite(at: 2, client: 0, table: "p", id: "b", values: ["y", .null], object: image),
                "c": TraceWrite(at: 3, client: 0, table: "p", id: "c", values: ["z", .null]),
            ]
        ]
        let text = String(decoding: FinalDataFloor.serialize(rows, tables: [table], epochMillis: 0), as: UTF8.self)
        let hex = image.synthetic.bytes(at: 0, count: 32).map { String(format: "%02x", $0) }.joined()
        #expect(
            text == """
                {"table":"p","columns":["c TEXT","img OBJECT"]}
                ["a",1,false,"x",{"hash":"\(hex)","size":1000}]
                ["b",2,false,"y",{"hash":"\(hex)","size":1000}]
                ["c",3,false,"z",null]

                """)
        #expect(FinalDataFloor.objectBytes(of: rows) == 1_000)
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
        #expect(FinalDataFloor.objectBytes(of: trace.finalRows()) == TracePins.seed1ObjectBytes)
        #expect(ObligedDataFloor.objectBytes(trace: trace) == TracePins.seed1ObjectBytes)
    }
}
