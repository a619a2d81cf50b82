import GRDB
import Synchronization

/// Which statements shaped by a client (pages with `where=` filters) may be kept in the
/// connections' statement caches: the first `limit` distinct ones, the rest prepared each time.
///
/// GRDB keeps every cached statement for the connection's life, so filters that differ in
/// their columns, their order, their count or a `null` would each add one, and a gateway that
/// runs for months would grow without bound. Preparing every time instead cost a filtered
/// 20-row page a quarter of its rate (docs/BENCHMARKS.md): the filters clients use again and
/// again are few, and stay cached.
///
/// ```swift
/// let statement = try shapes.statement(sql, db: db)
/// ```
final class StatementShapes: Sendable {
    /// Distinct shapes kept cached; each reader connection holds at most this many of them.
    static let defaultLimit = 256

    private let limit: Int
    private let cached = Mutex<Set<String>>([])

    init(limit: Int = StatementShapes.defaultLimit) { self.limit = limit }

    /// The statement for `sql`: from `db`'s cache if `sql` is, or now becomes, one of the kept
    /// shapes; prepared anew otherwise.
    func statement(_ sql: String, db: Database) throws -> Statement {
        let keep = cached.withLock { cached in
            if cached.contains(sql) { return true }
            guard cached.count < limit else { return false }
            cached.insert(sql)
            return true
        }
        return keep ? try db.cachedStatement(sql: sql) : try db.makeStatement(sql: sql)
    }

    /// How many shapes are kept.
    var count: Int { cached.withLock { $0.count } }
}
