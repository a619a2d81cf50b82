import DallyConfig
import DallyCore
import Logging
import PostgresNIO
import _ConnectionPoolModule

/// How the store reaches the database: connections from the pool, transactions that roll
/// back on any error and rethrow it unchanged, and errors turned into what a caller can act on.
///
/// A lost connection or a database that is restarting becomes ``DallyError`` `store_unavailable`
/// (the HTTP layer answers 503 with `Retry-After`; the gateway resends the same batch, which is
/// safe because batches apply once). A server out of disk space is `insufficient_storage`
/// (507), as the SQLite store's full disk is. Any other database error is `storage`, with
/// PostgreSQL's message.
struct PostgresAccess: Sendable {
    let client: PostgresClient
    let settings: PostgresSettings
    let logger: Logger
    let reachability: DatabaseReachability

    /// Runs `body` on a pooled connection; fails at once with `store_unavailable` while the
    /// database is known to be down (``DatabaseReachability``), and with the same error when
    /// the lease and `body` together take longer than ``operationLimit``.
    func withConnection<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        guard reachability.isReachable else { throw unavailable() }
        let client = client
        let logger = logger
        let limit = Self.operationLimit
        let unavailable = unavailable()
        // Whether the pool had handed out a connection when the deadline passed: tells a
        // pool that never answers from a statement that never ends.
        let leased = LeaseMark()
        do {
            return try await OperationDeadline(limit: limit).run(
                onTimeout: {
                    logger.error(
                        "a database operation did not end in time; answering store_unavailable",
                        metadata: ["limit_seconds": "\(limit.components.seconds)", "leased": "\(leased.isSet)"])
                    leased.close()
                    return unavailable
                },
                giveUp: {
                    // A statement sent after its connection closed is never answered
                    // (``OperationDeadline``): the operation cannot end well on it.
                    guard leased.isClosed else { return nil }
                    logger.warning("the database connection closed under an operation; answering store_unavailable")
                    return unavailable
                }
            ) {
                try await client.withConnection { connection in
                    leased.set(connection)
                    return try await body(connection)
                }
            }
        } catch {
            throw translate(error)
        }
    }

    /// The longest a store operation (waiting for a pooled connection included) may take before
    /// its caller is answered `store_unavailable`: below the 30 s a stopping node waits for
    /// requests under way, and far above any batch's apply time (a 10,000-row batch applies in
    /// well under a second).
    static let operationLimit: Duration = .seconds(20)

    /// Runs `body` in one transaction (`READ COMMITTED`) on a pooled connection: committed
    /// when it returns, rolled back when it throws.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        try await withConnection { connection in
            try await connection.query("BEGIN", logger: logger)
            let value: T
            do {
                value = try await body(connection)
            } catch {
                // A connection that is gone has no transaction left to roll back, and a
                // statement sent to it would never be answered (``OperationDeadline``).
                if !connection.isClosed { _ = try? await connection.query("ROLLBACK", logger: logger) }
                throw error
            }
            try await connection.query("COMMIT", logger: logger)
            return value
        }
    }

    /// What `error` means to the caller: see the type's documentation.
    func translate(_ error: any Error) -> any Error {
        if error is DallyError { return error }
        if let error = error as? PSQLError {
            if Self.isUnavailable(error) { return unavailable() }
            let message = error.serverInfo?[.message] ?? String(describing: error.code)
            if Self.isDiskFull(error) {
                return DallyError(
                    .insufficientStorage,
                    "the cloud's database is out of disk space (PostgreSQL: \(message)): nothing of the request was saved (reads go on). Free space where the PostgreSQL server at \(settings.host):\(settings.port) keeps its data; gateways send again by themselves"
                )
            }
            return DallyError(.storage, "the database refused a statement: \(message)")
        }
        // The pool gave up connecting (its circuit breaker), or was shut down.
        if error is ConnectionPoolError { return unavailable() }
        if error is CancellationError { return error }
        return DallyError(.storage, "the database failed: \(error)")
    }

    /// `error` for a log line: PostgresNIO describes its errors only as "PSQLError – Generic
    /// description…", which tells an operator nothing. This says what kind, the server's message
    /// and the cause beneath (a refused connection), never a statement's text or its values.
    static func logText(_ error: any Error) -> String {
        guard let error = error as? PSQLError else { return "\(error)" }
        var text = "\(error.code)"
        if let message = error.serverInfo?[.message] { text += ": \(message)" }
        if let underlying = error.underlying { text += " (\(underlying))" }
        return text
    }

    func unavailable() -> DallyError {
        DallyError(
            .storeUnavailable,
            "the cloud cannot reach its database at \(settings.host):\(settings.port); resend the batch shortly")
    }

    /// Whether `error` is the server's `disk_full` (SQLSTATE 53100): a write that needed room
    /// on the server's disk and found none. The transaction was rolled back.
    static func isDiskFull(_ error: PSQLError) -> Bool {
        error.code == .server && error.serverInfo?[.sqlState] == "53100"
    }

    /// Whether `error` says the database or the way to it is down, as opposed to a statement
    /// it refused: connection failures, and the server's connection-exception (08) and
    /// operator-intervention (57P: shutdown, cannot connect now) classes.
    static func isUnavailable(_ error: PSQLError) -> Bool {
        guard error.code == .server else {
            return error.code != .queryCancelled && error.code != .tooManyParameters
                && error.code != .invalidCommandTag && error.code != .messageDecodingFailure
        }
        let state = error.serverInfo?[.sqlState] ?? ""
        return state.hasPrefix("08") || state.hasPrefix("57P")
    }
}
