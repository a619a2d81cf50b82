import DallyCore
import Logging
import PostgresNIO

/// Keeps one connection LISTENing on the commit channel and hands every node's commits to the
/// store (``News``), so that notify waiters on this node hear of batches
/// applied on any node.
///
/// A notification is only sent while a listener is connected; after the connection was lost
/// (the database restarted), the listener reconnects with capped backoff, LISTENs again and
/// then reads every table's version, so a commit made while it was away is not missed.
struct CommitListener: Sendable {
    let configuration: PostgresConnection.Configuration
    let channel: String
    /// Set false when the connection is lost, true once listening again.
    let reachability: DatabaseReachability
    let logger: Logger
    let deliver: @Sendable (News) -> Void

    /// What the listener hears.
    enum News: Sendable {
        /// A commit on some node (this one included).
        case commits([RecentCommits.Commit])
        /// Every table's version, read after (re)connecting: commits may have been missed.
        case versions([String: Int64])
    }

    /// The first and the longest pause between attempts to reconnect.
    static let firstPause: Duration = .milliseconds(100)
    static let longestPause: Duration = .seconds(2)

    init(
        configuration: PostgresConnection.Configuration, channel: String, reachability: DatabaseReachability,
        logger: Logger, deliver: @escaping @Sendable (News) -> Void
    ) {
        self.configuration = configuration
        self.channel = channel
        self.reachability = reachability
        self.logger = logger
        self.deliver = deliver
    }

    /// Listens until the task is cancelled.
    func run() async {
        var pause = Self.firstPause
        var failures = 0
        while !Task.isCancelled {
            do {
                let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
                do {
                    try await withTaskCancellationHandler {
                        try await connection.listen(on: channel) { notifications in
                            deliver(.versions(try await Self.versions(on: connection, logger: logger)))
                            reachability.set(true)
                            if failures > 0 { logger.notice("listening for commits again", metadata: ["failures": "\(failures)"]) }
                            pause = Self.firstPause
                            failures = 0
                            for try await notification in notifications {
                                if let commits = Self.commits(notification.payload) { deliver(.commits(commits)) }
                            }
                        }
                    } onCancel: {
                        connection.close().whenComplete { _ in }
                    }
                } catch {
                    try? await connection.close()
                    throw error
                }
                try? await connection.close()
                // The notifications ended without an error: the connection is gone all the same.
                reachability.set(false)
            } catch {
                guard !Task.isCancelled else { return }
                reachability.set(false)
                failures += 1
                // One line per outage, not one per attempt.
                if failures == 1 { logger.warning("lost the commit listener's database connection; reconnecting", metadata: ["error": "\(PostgresAccess.logText(error))"]) }
            }
            guard !Task.isCancelled else { return }
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, Self.longestPause)
        }
    }

    /// Every table's version, read on the listening connection; bounded like every store
    /// operation, and given up as soon as the connection closes: a statement sent to a
    /// connection that closed meanwhile is never answered (``OperationDeadline``), and until
    /// the listener is back the node refuses every store operation (``DatabaseReachability``).
    private static func versions(on connection: PostgresConnection, logger: Logger) async throws -> [String: Int64] {
        try await OperationDeadline(limit: PostgresAccess.operationLimit).run(
            onTimeout: { ListenerStalled(reason: "reading the tables' versions did not end in time") },
            giveUp: {
                connection.isClosed ? ListenerStalled(reason: "the connection closed while the tables' versions were read") : nil
            }
        ) {
            try await PostgresPageReader.versions(nil, on: connection, logger: logger)
        }
    }

    /// Why the listener gave up on a connection before it listened.
    struct ListenerStalled: Error, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }

    /// The NOTIFY payload for one commit: a JSON object, table → `[after, upTo, origin]`.
    static func payload(_ commits: [RecentCommits.Commit]) -> String {
        var writer = JSONWriter()
        writer.raw("{")
        for (i, commit) in commits.sorted(by: { $0.table < $1.table }).enumerated() {
            if i > 0 { writer.raw(",") }
            writer.string(commit.table)
            writer.raw(":[")
            writer.int(commit.after)
            writer.raw(",")
            writer.int(commit.upTo)
            writer.raw(",")
            writer.string(commit.origin)
            writer.raw("]")
        }
        writer.raw("}")
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// The commits in a payload; nil for one this version of Dally did not write.
    static func commits(_ payload: String) -> [RecentCommits.Commit]? {
        guard case .object(let members) = try? JSONParser.parse(payload) else { return nil }
        var commits: [RecentCommits.Commit] = []
        for member in members {
            guard case .array(let parts) = member.value, parts.count == 3, case .int(let after) = parts[0],
                case .int(let upTo) = parts[1], case .string(let origin) = parts[2]
            else { return nil }
            commits.append(RecentCommits.Commit(table: member.key, after: after, upTo: upTo, origin: origin))
        }
        return commits
    }
}
