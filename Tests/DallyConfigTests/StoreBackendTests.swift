import Foundation
import Testing

@testable import DallyConfig

@Suite("CloudConfig: [store] backend")
struct StoreBackendTests {
    static let base = """
        [admin]
        token = "cloud-admin-token-0123456789"

        [[gateways]]
        id = "gateway-a"
        secret = "gateway-a-secret-0123456789"

        """

    static func parse(_ store: String) throws -> CloudConfig {
        try CloudConfig.parse(text: base + "[store]\n" + store, file: testFileName)
    }

    static func expectStoreRefusal(
        _ store: String, key: String, reason: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        expectRefusal(
            base + "[store]\n" + store, key: key, reason: reason, parse: CloudConfig.parse(text:file:),
            sourceLocation: sourceLocation)
    }

    @Test func sqliteIsTheDefault() throws {
        #expect(try CloudConfig.parse(text: Self.base, file: testFileName).store.backend == .sqlite)
        #expect(try Self.parse("backend = \"sqlite\"").store.backend == .sqlite)
    }

    @Test func aPostgresURLGivesHostPortUserAndDatabase() throws {
        let config = try Self.parse("backend = \"postgresql\"\nurl = \"postgres://dally@db.internal:5433/fleet\"\npool_size = 20")
        #expect(
            config.store.backend
                == .postgresql(
                    PostgresSettings(host: "db.internal", port: 5433, username: "dally", database: "fleet", poolSize: 20)))
    }

    @Test func thePortDefaultsTo5432AndAPasswordInTheURLIsKeptButNeverShown() throws {
        let config = try Self.parse("backend = \"postgresql\"\nurl = \"postgresql://dally:s3cret@db/fleet\"")
        guard case .postgresql(let settings) = config.store.backend else {
            Issue.record("not postgresql")
            return
        }
        #expect(settings.port == 5432)
        #expect(settings.password == "s3cret")
        #expect(settings.poolSize == PostgresSettings.defaultPoolSize)
        #expect(!config.store.backend.description.contains("s3cret"))
        #expect(config.store.backend.description == "postgres://dally@db:5432/fleet")
    }

    @Test func thePasswordComesFromTheNamedEnvironmentVariable() throws {
        // An environment of its own: setenv here would race other tests' child processes,
        // which copy the process's environment as they start.
        let config = try CloudConfig.parse(
            text: Self.base + "[store]\nbackend = \"postgresql\"\nurl = \"postgres://dally@db/fleet\"\npassword_env = \"PGPASS_X\"",
            file: testFileName, environment: ["PGPASS_X": "from-env"])
        guard case .postgresql(let settings) = config.store.backend else {
            Issue.record("not postgresql")
            return
        }
        #expect(settings.password == "from-env")
    }

    @Test func badStoreSettingsAreRefusedNamingTheKey() {
        Self.expectStoreRefusal("backend = \"mysql\"", key: "store.backend", reason: "use sqlite or postgresql")
        Self.expectStoreRefusal("backend = \"postgresql\"", key: "store.url", reason: "needs url")
        Self.expectStoreRefusal(
            "backend = \"postgresql\"\nurl = \"http://db/fleet\"", key: "store.url", reason: "not a postgres:// URL")
        Self.expectStoreRefusal(
            "backend = \"postgresql\"\nurl = \"postgres://db/fleet\"", key: "store.url", reason: "names no user")
        Self.expectStoreRefusal(
            "backend = \"postgresql\"\nurl = \"postgres://dally@db\"", key: "store.url", reason: "names no database")
        Self.expectStoreRefusal(
            "backend = \"postgresql\"\nurl = \"postgres://dally@db/fleet\"\npassword_env = \"DALLY_SURELY_UNSET_VARIABLE\"",
            key: "store.password_env", reason: "DALLY_SURELY_UNSET_VARIABLE is not set")
        Self.expectStoreRefusal(
            "backend = \"postgresql\"\nurl = \"postgres://dally:pw@db/fleet\"\npassword_env = \"HOME\"",
            key: "store.password_env", reason: "has a password already")
        Self.expectStoreRefusal(
            "backend = \"postgresql\"\nurl = \"postgres://dally@db/fleet\"\npool_size = 0", key: "store.pool_size",
            reason: "out of range")
        Self.expectStoreRefusal("url = \"postgres://dally@db/fleet\"", key: "store.url", reason: "only used with backend")
    }
}
