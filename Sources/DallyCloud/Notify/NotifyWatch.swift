import DallyCore
import DallySync

/// One gateway's notify request: the tables it follows, from which version, and what it
/// takes inline; for a long-poll until its first answer, for a stream (PROTOCOL.md §7.3.1)
/// across every line the stream carries.
///
/// ``look()`` reads, without waiting, what the gateway has not been told yet. The watch moves
/// its cursors on as a stream would: past changes that are the gateway's own (nothing to tell),
/// past a page it carried, and past a version it announced for a pull.
///
/// A page sent after the watch skipped the gateway's own changes is labelled with the cursor
/// the gateway holds (`since`), not the one the watch read from: both pages hold the same rows,
/// since every change between the two is the gateway's own and left out. So a gateway whose
/// batch did not move its cursor past its own change still finds each page continuing its
/// cursor, and a fleet still shares one read of the table after each change.
struct NotifyWatch: Sendable {
    /// What ``look()`` found to tell.
    struct News: Sendable {
        /// The tables that moved, with their current versions.
        var versions: TableVersions
        /// The pages carried inline, encoded.
        var pages: [[UInt8]]
    }

    let store: any CloudStore
    let pages: SharedPages
    let replica: String?
    let scopes: [String: TypedScope]
    let maxPageRows: Int
    /// The largest page carried inline, in bytes of JSON; a larger one is named for a pull.
    let maxInlineBytes: Int
    /// Per followed table, the version the watch has read up to.
    private(set) var cursors: [String: Int64]
    /// Per table taken inline, the version the gateway holds as far as the watch knows.
    private var held: [String: Int64]
    /// The tables taken inline; one announced without its page leaves the set (the gateway
    /// pulls it, and a later page would not continue its cursor).
    private var inline: Set<String>

    init(
        store: any CloudStore, pages: SharedPages, asked: TableVersions, inline: Set<String>, replica: String?,
        scopes: [String: TypedScope], maxPageRows: Int, maxInlineBytes: Int = .max
    ) {
        self.store = store
        self.pages = pages
        self.replica = replica
        self.scopes = scopes
        self.maxPageRows = maxPageRows
        self.maxInlineBytes = maxInlineBytes
        // Tables the cloud does not have never change; they are left out rather than refused,
        // so one table missing from the cloud's configuration does not stop notifications.
        var cursors: [String: Int64] = [:]
        for entry in asked.entries where store.schema(entry.table) != nil { cursors[entry.table] = entry.version }
        self.cursors = cursors
        held = cursors.filter { inline.contains($0.key) }
        self.inline = inline.intersection(cursors.keys)
    }

    /// The tables the gateway follows with the versions it holds, taken inline: what counts as
    /// seen for the tombstone horizon.
    var inlineCursors: [(table: String, version: Int64)] {
        held.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// Stops taking `tables` inline (a cursor that went back must be answered by a pull).
    mutating func takeNotInline(_ tables: Set<String>) {
        inline.subtract(tables)
        for table in tables { held[table] = nil }
    }

    /// What changed for the gateway past its cursors, or nil when nothing did; the cursors
    /// move past what it returns and past the gateway's own changes.
    mutating func look() async throws -> News? {
        let versions = store.versions
        var changed: [(table: String, version: Int64)] = []
        var carried: [[UInt8]] = []
        for (table, cursor) in cursors.sorted(by: { $0.key < $1.key }) {
            let current = versions[table] ?? 0
            guard current > cursor else { continue }
            if let scope = scopes[table] {
                if try await store.hasChanges(table: table, since: cursor, excludingReplica: replica, scope: scope) {
                    changed.append((table, current))
                    announced(table, at: current)
                } else {
                    cursors[table] = current
                }
                continue
            }
            let shared = try await pages.page(table: table, since: cursor, limit: maxPageRows)
            let (page, encoded) = shared.leavingOut(replica: replica)
            if page.rows.isEmpty, !page.resync {
                // Only the asking replica's own changes: follow on from here.
                if !page.more {
                    cursors[table] = max(cursor, page.version)
                    continue
                }
                // A batch of its own larger than a page: whether anything past the page is
                // someone else's, asked of the store rather than read page by page (telling
                // the gateway of its own batch would have it pull after every batch it sends).
                if let replica,
                    try await !store.hasChanges(table: table, since: page.version, excludingReplica: replica, scope: nil)
                {
                    cursors[table] = max(current, page.version)
                    continue
                }
            }
            // A change committed between the versions and the page's read is in the page: the
            // version told is the page's, so that it matches the rows carried.
            let latest = max(current, page.version)
            changed.append((table, latest))
            if inline.contains(table), !page.more, !page.resync, encoded.count <= maxInlineBytes, let from = held[table] {
                carried.append(from < page.since ? Self.relabelled(page, since: from) : encoded)
                cursors[table] = page.version
                held[table] = page.version
            } else {
                announced(table, at: latest)
            }
        }
        return changed.isEmpty ? nil : News(versions: TableVersions(changed), pages: carried)
    }

    /// `table` was announced at `version` without its page: the gateway pulls it.
    private mutating func announced(_ table: String, at version: Int64) {
        cursors[table] = version
        takeNotInline([table])
    }

    private static func relabelled(_ page: ChangePage, since: Int64) -> [UInt8] {
        var page = page
        page.since = since
        return page.encode()
    }
}
