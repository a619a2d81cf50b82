import DallyCore
import DallyFrugal
import Testing

@Suite("BaselineBodies")
struct BaselineBodiesTests {
    let orders = TraceTable(
        name: "orders", columns: ["customer TEXT", "total REAL", "status TEXT", "items JSON"], maxDelay: 60_000,
        networks: ["wifi", "cellular"])
    let status = TraceTable(
        name: "status", columns: ["state TEXT", "battery INTEGER"], maxDelay: 120_000, networks: ["wifi", "cellular"])

    func text(_ bytes: [UInt8]?) -> String? { bytes.map { String(decoding: $0, as: UTF8.self) } }

    @Test func naiveSendsOneWriteAsItsOwnBatch() {
        let write = TraceWrite(
            at: 5, client: 1, table: "orders", id: "o-1-1",
            values: ["cust-1", .double(12.5), "new", [["sku": "SKU-1", "qty": 2]]])
        let body = BaselineBodies.naive(
            write: write, table: orders, gateway: "g", replica: "r1", batchID: "n-1", baseVersion: nil,
            epochMillis: 1_800_000_000_000)
        #expect(
            text(body)
                == #"{"batch":"n-1","gateway":"g","replica":"r1","since":{},"sections":[{"table":"orders","columns":["customer","total","status","items"],"rows":[["o-1-1",null,1800000000005,"put","cust-1",12.5,"new",[{"sku":"SKU-1","qty":2}]]]}]}"#
        )
        let delete = TraceWrite(at: 9, client: 1, table: "orders", id: "o-1-1", values: [], deleted: true)
        let deleteBody = BaselineBodies.naive(
            write: delete, table: orders, gateway: "g", replica: "r1", batchID: "n-2", baseVersion: 4, epochMillis: 0)
        #expect(text(deleteBody)?.hasSuffix(#""rows":[["o-1-1",4,9,"delete"]]}]}"#) == true)
    }

    @Test func anObjectColumnCarriesTheReferenceTheCallerGives() {
        let photos = TraceTable(name: "photos", columns: ["caption TEXT", "image OBJECT"], maxDelay: 1, networks: ["wifi"])
        let write = TraceWrite(
            at: 5, client: 1, table: "photos", id: "p-1-1", values: ["shelf", .null],
            object: TraceObject(size: 10, seed: 3))
        let batch = BaselineBodies.naiveBatch(
            write: write, table: photos, gateway: "g", replica: "r1", batchID: "n-1", baseVersion: nil, epochMillis: 0,
            objectValue: { .string("ref-\($0.size)-\($0.seed)") })
        #expect(batch.sections.first?.changes.first?.values == ["shelf", "ref-10-3"])
        let plain = BaselineBodies.naiveBatch(
            write: write, table: photos, gateway: "g", replica: "r1", batchID: "n-1", baseVersion: nil, epochMillis: 0)
        #expect(plain.sections.first?.changes.first?.values == ["shelf", .null])
    }

    @Test func periodicCoalescesEachRowToItsLastStateGroupedByTable() {
        let writes = [
            TraceWrite(at: 1, client: 3, table: "status", id: "s-3", values: ["idle", 80]),
            TraceWrite(at: 2, client: 3, table: "orders", id: "o-3-1", values: ["c", .double(1), "new", []]),
            TraceWrite(at: 3, client: 3, table: "status", id: "s-3", values: ["busy", 79]),
            TraceWrite(at: 4, client: 3, table: "orders", id: "o-3-2", values: ["d", .double(2), "new", []]),
            TraceWrite(at: 5, client: 3, table: "orders", id: "o-3-1", values: [], deleted: true),
        ]
        let batch = BaselineBodies.periodicBatch(
            writes: writes, tables: [orders, status], gateway: "g", replica: "r3", batchID: "p-1", epochMillis: 100,
            baseVersion: { table, id in table == "status" && id == "s-3" ? 7 : nil })
        #expect(batch?.sections.map(\.table) == ["orders", "status"])
        #expect(batch?.sections.map(\.columns) == [["customer", "total", "status", "items"], ["state", "battery"]])
        #expect(
            batch?.sections[0].changes == [
                .init(id: "o-3-1", baseVersion: nil, updatedAt: 105, deleted: true, values: []),
                .init(id: "o-3-2", baseVersion: nil, updatedAt: 104, deleted: false, values: ["d", .double(2), "new", []]),
            ])
        #expect(
            batch?.sections[1].changes == [.init(id: "s-3", baseVersion: 7, updatedAt: 103, deleted: false, values: ["busy", 79])])
        #expect(batch?.rowCount == 3)
        let bytes = BaselineBodies.periodic(
            writes: writes, tables: [orders, status], gateway: "g", replica: "r3", batchID: "p-1", epochMillis: 100,
            baseVersion: { table, id in table == "status" && id == "s-3" ? 7 : nil })
        #expect(bytes == batch?.encode())
        #expect(
            BaselineBodies.periodic(
                writes: [], tables: [orders], gateway: "g", replica: "r", batchID: "p", epochMillis: 0,
                baseVersion: { _, _ in nil }) == nil)
    }

    @Test func periodicSendsGroupEachClientsWritesByItsTicks() {
        func write(_ at: Int64, _ client: Int) -> TraceWrite {
            TraceWrite(at: at, client: client, table: "status", id: "s-\(client)", values: ["idle", 1])
        }
        // Two clients: phases 0 and 30 s with a one-minute period.
        let trace = FrugalTrace(
            tables: [status], writes: [write(0, 0), write(10_000, 1), write(40_000, 1), write(59_999, 0), write(60_000, 0)],
            wifiUp: [0..<120_000], duration: 120_000, clients: 2)
        let sends = BaselineBodies.periodicSends(trace: trace, period: 60_000)
        #expect(sends.map(\.at) == [30_000, 60_000, 90_000, 120_000])
        #expect(sends.map(\.client) == [1, 0, 1, 0])
        #expect(sends.map { $0.writes.map(\.at) } == [[10_000], [0, 59_999], [40_000], [60_000]])
    }
}
