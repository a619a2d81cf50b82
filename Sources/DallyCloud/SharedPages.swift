import DallyCore
import DallySync

/// One read of a table's changes from one cursor, shared by every gateway that asks for it
/// while the table stands still.
///
/// After a change, every gateway that follows the table is told and asks for the same page:
/// the same table, the same cursor (the version before the change), the same limit. Read once
/// per gateway, the cloud's cost per change grows with the fleet. Here the first gateway to ask
/// reads the page, with every row's origin, and the others wait for that read
/// (``SharedLoads``); each then gets the page without its own rows
/// (``ChangePage/leavingOut(replica:)``), and the page's JSON, encoded once, when none of its
/// rows is theirs.
///
/// An entry is valid for one *generation*: the table's version in the store when it was asked
/// for. A later commit makes it stale. A page is read from a snapshot at least as new as that
/// version, so a shared page never misses a change its generation promised. Scoped and
/// resyncing reads are not shared: they depend on who asks.
final class SharedPages: Sendable {
    /// A page as shared: the rows of every origin, and its JSON (§7.1) encoded once.
    struct Page: Sendable {
        let page: ChangePage
        let encoded: [UInt8]

        /// The page and its JSON as `replica` gets them: the shared bytes unless a row is its
        /// own. A resync page keeps the asker's rows (PROTOCOL.md §4.8).
        func leavingOut(replica: String?) -> (page: ChangePage, encoded: [UInt8]) {
            guard let replica, !page.resync else { return (page, encoded) }
            let own = page.leavingOut(replica: replica)
            return own.rows.count == page.rows.count ? (page, encoded) : (own, own.encode())
        }
    }

    private struct Key: Hashable, Sendable {
        let table: String
        let since: Int64
        let limit: Int
    }

    private let store: any CloudStore
    private let loads: SharedLoads<Key, Page>
    private let counters: CloudCounters

    init(store: any CloudStore, counters: CloudCounters, capacity: Int = 1024) {
        self.store = store
        self.counters = counters
        loads = SharedLoads(capacity: capacity)
    }

    /// `table`'s page after `since`, of at most `limit` rows, with every row's origin.
    func page(table: String, since: Int64, limit: Int) async throws -> Page {
        let store = self.store
        let (page, shared) = try await loads.value(
            for: Key(table: table, since: since, limit: limit), generation: store.versions[table] ?? 0
        ) {
            let page = try await store.changes(
                table: table, since: since, limit: limit, excludingReplica: nil, scope: nil, resyncing: false)
            return Page(page: page, encoded: page.encode())
        }
        counters.recordPage(shared: shared)
        return page
    }
}
