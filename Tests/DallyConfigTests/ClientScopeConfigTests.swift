import DallyCore
import Testing

@testable import DallyConfig

private let header = """
    [admin]
    token = "admin-token-0123456789"

    [[tables]]
    name = "tasks"
    columns = ["user_id TEXT", "n INTEGER", "items JSON", "photo OBJECT", "raw BLOB"]

    [[clients]]
    name = "phone"
    token = "phone-token-0123456789"
    read = ["*"]
    write = ["*"]

    """

@Suite("Config: client token scopes")
struct ClientScopeConfigTests {
    @Test func aTokenScopeIsReadPerTable() throws {
        let config = try GatewayConfig.parse(
            text: header + #"scope = { tasks = { user_id = "u7", n = [1, 2] } }"# + "\n", file: testFileName)
        let scope = try #require(config.clients.first?.scopes["tasks"])
        #expect(scope.columns == ["n", "user_id"])
        #expect(scope.conditions.first { $0.column == "user_id" }?.values == [.string("u7")])
    }

    @Test func aTokenWithoutScopeHasNone() throws {
        let config = try GatewayConfig.parse(text: header, file: testFileName)
        #expect(config.clients.first?.scopes.isEmpty == true)
    }

    @Test(arguments: [
        (#"scope = { tasks = { shop = "S1" } }"#, "clients[0].scope.tasks.shop", "no column 'shop'"),
        (#"scope = { tasks = { items = "x" } }"#, "clients[0].scope.tasks.items", "JSON"),
        (#"scope = { tasks = { photo = "x" } }"#, "clients[0].scope.tasks.photo", "OBJECT"),
        (#"scope = { tasks = { raw = "eA==" } }"#, "clients[0].scope.tasks.raw", "BLOB"),
        (#"scope = { tasks = { n = "three" } }"#, "clients[0].scope.tasks.n", "INTEGER"),
        (#"scope = { tasks = {} }"#, "clients[0].scope.tasks", "empty scope"),
        (#"scope = { jobs = { user_id = "u7" } }"#, "clients[0].scope.jobs", "unknown table 'jobs'"),
    ])
    func badTokenScopesAreRefusedWithTheirKeyAndLine(_ line: String, _ key: String, _ reason: String) throws {
        let text = header + line + "\n"
        let refused = expectRefusal(text, key: key, reason: reason, parse: GatewayConfig.parse(text:file:))
        let error = try #require(refused)
        #expect(error.line == DallyConfigTests.line(containing: line, in: text))
    }
}
