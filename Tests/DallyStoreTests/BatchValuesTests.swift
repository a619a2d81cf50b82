import DallyCore
import DallySync
import Foundation
import GRDB
import Testing

@testable import DallyStore

/// A batch carries each stored value as `RowDecoding.value(_:type:)` and `wireJSON` read it
/// (the build reads the columns by SQLite's own calls, `WireColumn`): every column type,
/// NULL, and values of another type written into a column by something other than Dally.
@Suite("Replica sync: the values a batch carries")
struct BatchValuesTests {
    static let kinds = table(
        "kinds",
        [("t", .text), ("i", .integer), ("r", .real), ("b", .boolean), ("j", .json), ("x", .blob), ("o", .object)])
    let directory = temporaryDirectory()
    let store: ReplicaStore

    init() throws {
        store = try ReplicaStore.open(directory: directory, tables: [Self.kinds], now: { 1_000 })
    }

    @Test func everyColumnTypeGoesAsItsWireValue() async throws {
        _ = try await store.write(
            put(
                "a",
                [
                    (0, .text("Ada")), (1, .integer(-7)), (2, .real(2.5)), (3, .boolean(true)),
                    (4, .json(#"{"k":[1,"two"]}"#)), (5, .blob([0, 1, 254, 255])),
                ]), table: "kinds")
        _ = try await store.write(put("b", [(2, .real(3)), (3, .boolean(false)), (5, .blob([]))]), table: "kinds")
        _ = try await store.write(put("c", [(0, .text("gone"))]), table: "kinds")
        _ = try await store.write(delete("c"), table: "kinds")
        _ = try await store.write(put("d", []), table: "kinds")
        // Stored by something other than Dally: values of another type (SQLite keeps them as
        // the column's affinity allows: 12 becomes text in a TEXT column, 1.5 stays a real).
        try await store.pool.write { db in
            try db.execute(
                sql: """
                    UPDATE t_kinds SET c_t = 12, c_i = 'twelve', c_r = 'x', c_b = 1.5, c_j = 'not json',
                        c_x = 'text', c_o = 3 WHERE id = 'd'
                    """)
        }

        let batch = try #require(try await store.nextBatch(gateway: "gw", maxRows: 100))
        let changes = try #require(try sentRequest(batch).sections.first?.changes)
        let values = Dictionary(uniqueKeysWithValues: changes.map { ($0.id, $0.values) })
        let twoBytes = Data([0, 1, 254, 255]).base64EncodedString()
        #expect(
            values["a"] == [
                "Ada", .int(-7), .double(2.5), .bool(true),
                .object([JSONMember("k", .array([.int(1), "two"]))]), .string(twoBytes), nil,
            ])
        #expect(values["b"] == [nil, nil, .double(3), .bool(false), nil, .string(""), nil])
        #expect(changes.first { $0.id == "c" }?.deleted == true)
        #expect(values["c"] == [])
        #expect(values["d"] == ["12", "twelve", "x", .double(1.5), "not json", "text", .int(3)])

        // The same values, read the way pages read rows and converted as before.
        let stored = try await store.pool.read { db in
            try RowDecoding.storedRows(
                db.cachedStatement(sql: "SELECT \(TableSQL(schema: Self.kinds).selectList(qualifiedBy: "t")) FROM t_kinds t WHERE id IN ('a', 'b', 'd')"),
                arguments: [], schema: Self.kinds)
        }
        for row in stored {
            #expect(values[row.id] == row.values.map(\.wireJSON), "row \(row.id)")
        }
    }

    /// The build writes each row into the body as it reads it (``BatchSectionWriter``), not
    /// through a ``BatchRequest``: the body is the one the request it decodes to encodes, byte
    /// for byte, text that needs escaping, is not ASCII, holds a NUL or is not UTF-8 included.
    @Test func theBodyIsWrittenAsItsRequestEncodes() async throws {
        let texts = [
            "plain", #"quote " and \ backslash"#, "line\nbreak\ttab\r", "\u{01}\u{1F}control", "Zoë 東京 🚢", "",
        ]
        for (i, text) in texts.enumerated() {
            _ = try await store.write(
                put("t\(i)", [(0, .text(text)), (1, .integer(Int64(i) - 3)), (2, .real(Double(i) / 3)), (3, .boolean(i % 2 == 0))]),
                table: "kinds")
        }
        _ = try await store.write(put("z", [(4, .json(#"{"a":"\u00e9"}"#))]), table: "kinds")
        _ = try await store.write(put("y", [(0, .text("soon gone"))]), table: "kinds")
        _ = try await store.write(delete("y"), table: "kinds")
        try await store.pool.write { db in
            try db.execute(sql: "UPDATE t_kinds SET c_t = 'ab' || char(0) || 'cd' WHERE id = 't0'")
            try db.execute(sql: "UPDATE t_kinds SET c_t = CAST(X'61FF62' AS TEXT) WHERE id = 't1'")
        }
        let batch = try #require(try await store.nextBatch(gateway: "gw", maxRows: 100))
        let request = try sentRequest(batch)
        #expect(request.encode() == batch.body)
        #expect(batch.rows == texts.count + 2)
        #expect(batch.outline == request.outline)
        let values = Dictionary(uniqueKeysWithValues: request.sections[0].changes.map { ($0.id, $0.values.first) })
        #expect(values["t0"] == "ab")
        #expect(values["t1"] == .string("a\u{FFFD}b"))
        #expect(values["t4"] == "Zoë 東京 🚢")
    }
}
