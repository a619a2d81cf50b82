import DallyConfig
import DallyCore
import DallyObjects
import DallySync
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// The cloud's primary copy in PostgreSQL: the ``CloudStore`` several `dally cloud` nodes share.
///
/// Every node opens the same database. Batches apply once whichever node receives them (the
/// batch's row in `cloud_batches` is claimed with `INSERT … ON CONFLICT DO NOTHING` in the
/// batch's transaction: a second node sending the same id waits for the first to commit and
/// then answers from the stored results). Versions come from a per-table counter row locked
/// for the length of the batch's transaction (see ``PostgresBatchApplier``). Each commit
/// NOTIFYs the channel ``channel`` with the versions it made; every node LISTENs and moves
/// ``versions`` and its observers on (``CommitListener``), so a gateway waiting on any node is
/// told.
///
/// ```swift
/// let store = try await PostgresCloudStore.open(settings, tables: config.tables, logger: logger)
/// ```
public final class PostgresCloudStore: CloudStore {
    /// The LISTEN/NOTIFY channel of commits; the payload is a JSON object, table → version.
    public static let channel = "dally_commits"

    let access: PostgresAccess
    let tables: [String: PostgresTableSQL]
    let chunkStore: PostgresChunkStore
    private let state: Mutex<State>
    /// The pool's and the listener's tasks, cancelled by ``close()``. The store is opened before
    /// any service group runs and used without one in tests, so it runs its own connections.
    private let background: Mutex<[Task<Void, Never>]>

    private struct State {
        var versions: [String: Int64]
        var observers: [@Sendable ([String: Int64]) -> Void] = []
        var recent = RecentCommits()
    }

    /// Connects, migrates the database to `tables` and starts listening for other nodes' commits.
    ///
    /// - Throws: ``PostgresStoreError`` when the database cannot be reached (``PostgresStoreError/unreachable``),
    ///   refuses the login, or holds tables the configuration is incompatible with.
    public static func open(_ settings: PostgresSettings, tables: [TableSchema], logger: Logger) async throws
        -> PostgresCloudStore
    {
        let sql = tables.map(PostgresTableSQL.init(schema:))
        let versions: [String: Int64]
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(
                configuration: connectionConfiguration(settings), id: 0, logger: logger)
        } catch {
            throw openingError(error, settings: settings)
        }
        do {
            versions = try await PostgresMigrations.run(sql, on: connection, logger: logger)
            try? await connection.close()
        } catch {
            try? await connection.close()
            if let error = error as? PostgresStoreError { throw error }
            throw openingError(error, settings: settings)
        }

        var configuration = PostgresClient.Configuration(
            host: settings.host, port: settings.port, username: settings.username, password: settings.password,
            database: settings.database, tls: .disable)
        configuration.options.maximumConnections = settings.poolSize
        configuration.options.connectTimeout = .seconds(3)
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        let access = PostgresAccess(
            client: client, settings: settings, logger: logger, reachability: DatabaseReachability())
        let store = PostgresCloudStore(access: access, tables: sql, versions: versions)
        store.start(client: client, settings: settings, logger: logger)
        return store
    }

    private init(access: PostgresAccess, tables: [PostgresTableSQL], versions: [String: Int64]) {
        self.access = access
        self.tables = Dictionary(uniqueKeysWithValues: tables.map { ($0.schema.name, $0) })
        self.chunkStore = PostgresChunkStore(access: access)
        self.state = Mutex(State(versions: versions))
        self.background = Mutex([])
    }

    private func start(client: PostgresClient, settings: PostgresSettings, logger: Logger) {
        let pool = Task { await client.run() }
        let listener = CommitListener(
            configuration: Self.connectionConfiguration(settings), channel: Self.channel,
            reachability: access.reachability, logger: logger
        ) { [weak self] news in
            switch news {
            case .commits(let commits): self?.heard(commits)
            case .versions(let versions): self?.merge(versions)
            }
        }
        let listening = Task { await listener.run() }
        background.withLock { $0 = [pool, listening] }
    }

    static func connectionConfiguration(_ settings: PostgresSettings) -> PostgresConnection.Configuration {
        var configuration = PostgresConnection.Configuration(
            host: settings.host, port: settings.port, username: settings.username, password: settings.password,
            database: settings.database, tls: .disable)
        configuration.options.connectTimeout = .seconds(5)
        return configuration
    }

    /// The error `open` reports, naming the database without its password.
    private static func openingError(_ error: any Error, settings: PostgresSettings) -> PostgresStoreError {
        if let error = error as? PSQLError {
            if error.code == .server {
                let message = error.serverInfo?[.message] ?? "refused"
                return PostgresStoreError("PostgreSQL at \(settings.host):\(settings.port) refused \(settings): \(message)")
            }
            if PostgresAccess.isUnavailable(error) {
                return PostgresStoreError(
                    "cannot reach PostgreSQL at \(settings.host):\(settings.port) (\(settings)); "
                        + "check that it is running and that [store] url names the right host and port",
                    unreachable: true)
            }
        }
        return PostgresStoreError(
            "cannot open \(settings) at \(settings.host):\(settings.port): \(error)", unreachable: true)
    }

    public func schema(_ table: String) -> TableSchema? { tables[table]?.schema }

    public func requireReachable() throws(DallyError) {
        guard access.reachability.isReachable else { throw access.unavailable() }
    }

    public var versions: [String: Int64] { state.withLock { $0.versions } }

    public func observeCommits(_ observer: @escaping @Sendable ([String: Int64]) -> Void) {
        state.withLock { $0.observers.append(observer) }
    }

    /// Moves the known versions on to `versions` (from a commit here or a NOTIFY from any
    /// node) and tells the observers about the tables that advanced.
    func merge(_ versions: [String: Int64]) {
        let (advanced, observers) = state.withLock { state in
            var advanced: [String: Int64] = [:]
            for (table, version) in versions where version > state.versions[table] ?? 0 && tables[table] != nil {
                state.versions[table] = version
                advanced[table] = version
            }
            return (advanced, state.observers)
        }
        guard !advanced.isEmpty else { return }
        for observer in observers { observer(advanced) }
    }

    /// Keeps the commits (from this node or NOTIFY) and moves the versions on to them.
    func heard(_ commits: [RecentCommits.Commit]) {
        state.withLock { state in
            for commit in commits where tables[commit.table] != nil { state.recent.record(commit) }
        }
        merge(Dictionary(commits.map { ($0.table, $0.upTo) }, uniquingKeysWith: max))
    }

    // MARK: - Reads

    public func changes(
        table: String, since: Int64, limit: Int, excludingReplica: String?, scope: TypedScope?, resyncing: Bool
    ) async throws -> ChangePage {
        guard let sql = tables[table] else { throw DallyError(.unknownTable, "the cloud has no table '\(table)'") }
        let logger = access.logger
        let page = try await access.withConnection { connection in
            // Version and horizon in one statement, before the rows (see PostgresPageReader).
            var binds = PostgresBindings()
            binds.append(table)
            var state: (version: Int64, horizon: Int64) = (0, 0)
            let rows = try await connection.query(
                PostgresQuery(unsafeSQL: "SELECT version, horizon FROM cloud_tables WHERE tbl = $1", binds: binds),
                logger: logger)
            for try await row in rows.decode((Int64, Int64).self) { state = row }
            return try await PostgresPageReader.page(
                sql, asked: since, resyncing: resyncing, horizon: state.horizon, limit: limit,
                excludingReplica: excludingReplica, scope: scope, tableVersion: state.version, on: connection,
                logger: logger)
        }
        merge([table: page.version])
        return page
    }

    public func hasChanges(
        table: String, since: Int64, excludingReplica: String?, scope: TypedScope?
    ) async throws -> Bool {
        if scope != nil {
            guard since < (state.withLock { $0.versions[table] ?? 0 }) else { return false }
            let page = try await changes(table: table, since: since, limit: 1, excludingReplica: excludingReplica, scope: scope)
            return !page.rows.isEmpty
        }
        let (current, known) = state.withLock { state in
            let current = state.versions[table] ?? 0
            return (current, excludingReplica.flatMap {
                state.recent.foreignChange(table: table, since: since, current: current, excluding: $0)
            })
        }
        guard let sql = tables[table], since < current else { return false }
        guard let excludingReplica else { return true }
        // Every parked notify poll asks this on every commit: memory first (RecentCommits).
        if let known { return known }
        let logger = access.logger
        return try await access.withConnection { connection in
            var binds = PostgresBindings()
            binds.append(since)
            binds.append(excludingReplica)
            let rows = try await connection.query(
                PostgresQuery(unsafeSQL: sql.selectForeignExists, binds: binds), logger: logger)
            for try await _ in rows { return true }
            return false
        }
    }

    // MARK: - Upkeep

    public func forgetAnswers(receivedBefore before: Int64) async throws -> Int {
        let logger = access.logger
        return try await access.withConnection { connection in
            let rows = try await connection.query(
                "DELETE FROM cloud_batches WHERE received_at < \(before) AND results IS NOT NULL RETURNING 1",
                logger: logger)
            var count = 0
            for try await _ in rows { count += 1 }
            return count
        }
    }

    public func statistics() async throws -> CloudStoreStatistics {
        let tables = self.tables
        let logger = access.logger
        return try await access.withConnection { connection in
            let versions = try await PostgresPageReader.versions(nil, on: connection, logger: logger)
            let horizons = try await PostgresPageReader.horizons(Array(tables.keys), on: connection, logger: logger)
            var result: [String: CloudStoreStatistics.Table] = [:]
            for (name, table) in tables {
                let rows = try await Self.count(
                    PostgresQuery(unsafeSQL: table.rowCountStatement), on: connection, logger: logger)
                let tombstones = try await Self.count(
                    PostgresQuery(unsafeSQL: table.tombstoneCountStatement), on: connection, logger: logger)
                result[name] = .init(
                    version: versions[name] ?? 0, live: rows - tombstones, tombstones: tombstones,
                    horizon: horizons[name] ?? 0)
            }
            let answers = try await Self.count("SELECT COUNT(*) FROM cloud_batches", on: connection, logger: logger)
            let objects = try await Self.count("SELECT COUNT(*) FROM cloud_objects", on: connection, logger: logger)
            let bytes = try await Self.count("SELECT pg_database_size(current_database())::BIGINT", on: connection, logger: logger)
            return CloudStoreStatistics(tables: result, storedAnswers: answers, bytesOnDisk: bytes, objects: objects)
        }
    }

    static func count(_ query: PostgresQuery, on connection: PostgresConnection, logger: Logger) async throws -> Int64 {
        for try await value in try await connection.query(query, logger: logger)
            .decode(Int64.self)
        {
            return value
        }
        return 0
    }

    public func close() throws {
        for task in background.withLock({ $0 }) { task.cancel() }
    }
}
