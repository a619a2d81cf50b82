import Foundation
import GRDB
import Testing

@testable import DallyStore

/// Values bound straight to a prepared statement (`Statement.execute(values:)`) are stored as
/// GRDB's own binding stores them, a wrong count changes nothing, and a cached statement that
/// GRDB executed with arguments before takes the new values, not the old ones.
@Suite("Statement values")
struct StatementValuesTests {
    let queue: DatabaseQueue

    init() throws {
        queue = try DatabaseQueue()
        try queue.write { db in try db.execute(sql: "CREATE TABLE t (id TEXT PRIMARY KEY, n INTEGER, r REAL, s TEXT, b BLOB)") }
    }

    static let insert = "INSERT INTO t (id, n, r, s, b) VALUES (?, ?, ?, ?, ?)"

    @Test func everyKindOfValueIsStoredAsGRDBStoresIt() throws {
        let rows: [[DatabaseValue]] = [
            ["a".databaseValue, 42.databaseValue, 2.5.databaseValue, "héllo".databaseValue, Data([1, 2, 3]).databaseValue],
            ["b".databaseValue, .null, .null, "".databaseValue, Data().databaseValue],
        ]
        try queue.write { db in
            try db.cachedStatement(sql: Self.insert).execute(values: rows[0])
            try db.cachedStatement(sql: Self.insert).execute(values: rows[1])
            // The same rows through GRDB's own binding, for comparison.
            try db.execute(sql: Self.insert, arguments: StatementArguments(["c".databaseValue] + rows[0].dropFirst()))
            try db.execute(sql: Self.insert, arguments: StatementArguments(["d".databaseValue] + rows[1].dropFirst()))
        }
        let stored = try queue.read { db in try Row.fetchAll(db, sql: "SELECT n, r, s, b FROM t ORDER BY id") }
        #expect(stored.count == 4)
        #expect(stored[0] == stored[2])
        #expect(stored[1] == stored[3])
        #expect(stored[0]["n"] as Int64? == 42)
        #expect(stored[0]["s"] as String? == "héllo")
        #expect(stored[0]["b"] as Data? == Data([1, 2, 3]))
        #expect(stored[1]["s"] as String? == "")
    }

    @Test func aWrongNumberOfValuesIsRefusedAndChangesNothing() throws {
        try queue.write { db in
            #expect(throws: StoreError.self) { try db.cachedStatement(sql: Self.insert).execute(values: ["a".databaseValue]) }
            #expect(throws: StoreError.self) {
                try db.cachedStatement(sql: Self.insert).execute(values: Array(repeating: .null, count: 6))
            }
        }
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") } == 0)
    }

    @Test func aCachedStatementRunWithArgumentsBeforeTakesTheNewValues() throws {
        try queue.write { db in
            try db.cachedStatement(sql: Self.insert).execute(arguments: ["a", 1, nil, nil, nil])
            try db.cachedStatement(sql: Self.insert).execute(values: ["b".databaseValue, 2.databaseValue, .null, .null, .null])
            try db.cachedStatement(sql: Self.insert).execute(arguments: ["c", 3, nil, nil, nil])
            let select = try db.cachedStatement(sql: "SELECT n FROM t WHERE id = ?")
            try select.bind(values: ["b".databaseValue])
            #expect(try Int.fetchOne(select) == 2)
            #expect(try Int.fetchOne(select, arguments: ["c"]) == 3)
            try select.bind(values: ["a".databaseValue])
            #expect(try Int.fetchOne(select) == 1)
        }
    }
}
