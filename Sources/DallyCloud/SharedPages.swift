import DallyCore
import DallySync
import Synchronization

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
/// version, so a shared page never misses a change its generation promised. A tombstone
/// compaction moves the horizon without a commit: it forgets every page (``forgetAll()``), and
/// an entry serves for a few seconds at most, so that a compaction on another node, which this
/// one does not hear of, cannot keep a reader behind the new horizon from its resync for long.
/// Scoped and resyncing reads are not shared: they depend on who asks.
final class SharedPages: Sendable {
    /// How long one read serves: the burst of a fleet asking after one change.
    static let window: Int64 = 5_000

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
        /// ``forgetAll()`` calls so far, and the window of ``window`` ms the read belongs to.
        let epoch: Int64
        let window: Int64
    }

    private let store: any CloudStore
    private let loads: SharedLoads<Key, Page>
    private let counters: CloudCounters
    private let now: @Sendable () -> Int64
    private let epoch = Atomic<Int64>(0)

    /// - Parameters:
    ///   - now: the wall clock, ms since 1970.
    ///   - capacity: pages kept at most. A fleet's burst after a change needs one per table and
    ///     cursor; gateways catching up each read pages of their own (up to `max_page_rows`
    ///     rows, kept decoded and encoded), so the bound is what caps the memory.
    init(
        store: any CloudStore, counters: CloudCounters, now: @escaping @Sendable () -> Int64, capacity: Int = 64
    ) {
        self.store = store
        self.counters = counters
        self.now = now
        loads = SharedLoads(capacity: capacity)
    }

    /// Makes every page read so far stale.
    func forgetAll() {
        epoch.add(1, ordering: .relaxed)
    }

    /// `table`'s page after `since`, of at most `limit` rows, with every row's origin.
    func page(table: String, since: Int64, limit: Int) async throws -> Page {
        let store = self.store
        let (page, shared) = try await loads.value(
            for: Key(
                table: table, since: since, limit: limit, epoch: epoch.load(ordering: .relaxed),
                window: now() / Self.window),
            generation: store.versions[table] ?? 0
        ) {
            let page = try await store.changes(
                table: table, since: since, limit: limit, excludingReplica: nil, scope: nil, resyncing: false)
            return Page(page: page, encoded: page.encode())
        }
        counters.recordPage(shared: shared)
        return page
    }
}
