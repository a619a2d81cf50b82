import DallyCore
import Testing

@testable import DallyConfig

private let header = """
    [admin]
    token = "admin-token-0123456789"

    [[tables]]
    name = "orders"
    columns = ["store_id TEXT", "region TEXT", "n INTEGER", "paid BOOLEAN", "items JSON", "photo OBJECT", "raw BLOB"]

    """

private func parseGateway(_ text: String) throws -> GatewayConfig {
    try GatewayConfig.parse(text: text, file: testFileName)
}

/// `text` refused for `key`, its error; the parser named outside the `#require` macro.
private func refusal(_ text: String, key: String, reason: String) -> ConfigError? {
    expectRefusal(text, key: key, reason: reason, parse: GatewayConfig.parse(text:file:))
}

@Suite("Config: table scopes")
struct ScopeConfigTests {
    @Test func aScopeReadsEqualityAndLists() throws {
        let config = try parseGateway(
            header + #"scope = { store_id = "S12", region = ["north", "east"], n = 3, paid = true }"# + "\nscope_writes = \"reject\"\n")
        let table = try #require(config.tables.first)
        #expect(table.scopeWrites == .reject)
        let scope = try #require(table.scope)
        #expect(scope.columns == ["n", "paid", "region", "store_id"])
        #expect(scope.conditions.first { $0.column == "region" }?.values == [.string("north"), .string("east")])
        let typed = try scope.validated(against: table)
        let values: [String: Value] = ["store_id": .text("S12"), "region": .text("east"), "n": .integer(3), "paid": .boolean(true)]
        #expect(typed.matches { values[$0] })
        #expect(!typed.matches { $0 == "region" ? .text("south") : values[$0] })
        #expect(!typed.matches { $0 == "store_id" ? .null : values[$0] })
    }

    @Test func noScopeMeansEveryRowAndAcceptedWrites() throws {
        let table = try #require(try parseGateway(header).tables.first)
        #expect(table.scope == nil)
        #expect(table.scopeWrites == .accept)
        #expect(table.scopeColumns.isEmpty)
    }

    @Test(arguments: [
        (#"scope = { shop = "S1" }"#, "tables[0].scope.shop", "no column 'shop'"),
        (#"scope = { items = "x" }"#, "tables[0].scope.items", "JSON"),
        (#"scope = { photo = "x" }"#, "tables[0].scope.photo", "OBJECT"),
        (#"scope = { raw = "eA==" }"#, "tables[0].scope.raw", "BLOB"),
        (#"scope = { n = "three" }"#, "tables[0].scope.n", "INTEGER"),
        (#"scope = { region = [] }"#, "tables[0].scope.region", "no value"),
        (#"scope = { region = [{ a = 1 }] }"#, "tables[0].scope.region[0]", "wrong type"),
        (#"scope = {}"#, "tables[0].scope", "empty scope"),
        (#"scope_writes = "maybe""#, "tables[0].scope_writes", "accept, reject"),
        (#"scope_columns = ["items"]"#, "tables[0].scope_columns[0]", "JSON"),
        (#"scope_columns = ["nope"]"#, "tables[0].scope_columns[0]", "no column 'nope'"),
    ])
    func badScopesAreRefusedWithTheirKeyAndLine(_ line: String, _ key: String, _ reason: String) throws {
        let text = header + line + "\n"
        let refused = refusal(text, key: key, reason: reason)
        let error = try #require(refused)
        #expect(error.line == DallyConfigTests.line(containing: line, in: text))
    }

    @Test func theCloudIndexesScopeColumnsAndThoseOfAPastedScope() throws {
        let text = """
            [admin]
            token = "admin-token-0123456789"

            [[gateways]]
            id = "shop-12"
            secret = "gateway-secret-0123456789"

            [[tables]]
            name = "orders"
            columns = ["store_id TEXT", "region TEXT"]
            scope_columns = ["region"]
            scope = { store_id = "S12" }

            """
        let config = try CloudConfig.parse(text: text, file: testFileName)
        #expect(config.tables.first?.scopeColumns == ["region", "store_id"])
    }
}
