import Foundation

/// Where the cloud's PostgreSQL database is and how many connections a node keeps to it
/// (`[store] backend = "postgresql"`).
///
/// The password comes from the URL or from the environment variable `password_env` names. It
/// is never part of ``description``, which is what logs and errors show.
public struct PostgresSettings: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String
    /// The most connections one node opens to the database (`pool_size`).
    public var poolSize: Int

    /// The default of ``poolSize``.
    public static let defaultPoolSize = 8
    /// PostgreSQL's port when the URL names none.
    public static let defaultPort = 5432

    public init(
        host: String, port: Int = defaultPort, username: String, password: String? = nil, database: String,
        poolSize: Int = defaultPoolSize
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.poolSize = poolSize
    }

    /// `postgres://user@host:port/database`, without the password.
    public var description: String { "postgres://\(username)@\(host):\(port)/\(database)" }

    /// Reads `url` (`postgres://user[:password]@host[:port]/database`); `key` names it in errors.
    static func parse(url text: String, key: String) throws(KeyError) -> PostgresSettings {
        let form = "write it as postgres://user@host:port/database"
        guard let url = URLComponents(string: text), let scheme = url.scheme,
            scheme == "postgres" || scheme == "postgresql"
        else {
            throw KeyError(key: key, reason: "not a postgres:// URL; \(form)")
        }
        guard let host = url.host, !host.isEmpty else { throw KeyError(key: key, reason: "names no host; \(form)") }
        guard let user = url.user, !user.isEmpty else { throw KeyError(key: key, reason: "names no user; \(form)") }
        let database = String(url.path.drop { $0 == "/" })
        guard !database.isEmpty, !database.contains("/") else {
            throw KeyError(key: key, reason: "names no database; \(form)")
        }
        let port = url.port ?? defaultPort
        guard (1...65535).contains(port) else { throw KeyError(key: key, reason: "port \(port) is out of range") }
        guard url.query == nil, url.fragment == nil else {
            throw KeyError(key: key, reason: "takes no query or fragment (options go in [store]); \(form)")
        }
        return PostgresSettings(
            host: host, port: port, username: user.removingPercentEncoding ?? user,
            password: url.password.map { $0.removingPercentEncoding ?? $0 }, database: database)
    }
}

/// Which store holds the cloud's primary copy (`[store] backend`).
public enum StoreBackend: Sendable, Equatable, CustomStringConvertible {
    /// One SQLite file in the data directory: one cloud node, no database server.
    case sqlite
    /// A PostgreSQL database that several cloud nodes share.
    case postgresql(PostgresSettings)

    /// `sqlite`, or the database URL without its password.
    public var description: String {
        switch self {
        case .sqlite: "sqlite"
        case .postgresql(let settings): settings.description
        }
    }
}
