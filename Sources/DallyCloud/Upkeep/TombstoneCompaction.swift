import DallyCore
import DallySync
import Logging
import Synchronization

/// The cloud's side of tombstone compaction: it notes how far each gateway has pulled each
/// table (the `since` of every batch and page request), and purges a table's tombstones once
/// they are older than its `tombstone_ttl` and every gateway seen within that TTL is past them.
/// A gateway silent for longer than the TTL no longer holds the horizon back: when it returns,
/// its cursor is behind the horizon and it resyncs (PROTOCOL.md §4.8).
///
/// Cursors are kept in memory and written to the store at each pass (and on `flush()`), so a
/// pull costs no write; several nodes each write what they saw, the latest sighting winning.
/// A cursor that goes back from one seen before marks a gateway restored from a backup
/// (``regressed(_:)``).
public final class TombstoneCompaction: Sendable {
    let store: any CloudStore
    let tables: [TableSchema]
    let now: @Sendable () -> Int64
    let logger: Logger
    private let afterPurge: @Sendable () -> Void
    private let state = Mutex(State())

    private struct State {
        /// The latest cursor seen of each gateway and table, here or (once loaded) in the store.
        var known: [Key: GatewayCursor] = [:]
        /// Those not yet written to the store.
        var unflushed: Set<Key> = []
        var loaded = false
        var purged: [String: Int64] = [:]
    }

    private struct Key: Hashable {
        let gateway: String
        let table: String
    }

    /// - Parameter purged: told after a pass purged anything: pages read before it may hold
    ///   what a reader behind the new horizon must now get as a resync.
    init(
        store: any CloudStore, tables: [TableSchema], now: @escaping @Sendable () -> Int64, logger: Logger,
        purged: @escaping @Sendable () -> Void = {}
    ) {
        self.store = store
        self.tables = tables
        self.now = now
        self.logger = logger
        self.afterPurge = purged
    }

    /// Notes that `gateway` holds every change of each table up to its version in `since`.
    ///
    /// A cursor only moves forward, except for a table the gateway is pulling again from
    /// scratch (`resyncing`): a resent batch carries the cursors of when it was first built.
    func saw(gateway: String, since: TableVersions, resyncing: [String] = []) {
        let at = now()
        state.withLock { state in
            for (table, version) in since.entries {
                let key = Key(gateway: gateway, table: table)
                let kept = resyncing.contains(table) ? version : max(version, state.known[key]?.version ?? 0)
                state.known[key] = GatewayCursor(gateway: gateway, table: table, version: kept, seenAt: at)
                state.unflushed.insert(key)
            }
        }
    }

    func saw(gateway: String, table: String, since: Int64, resyncing: Bool) {
        saw(gateway: gateway, since: TableVersions([(table, since)]), resyncing: resyncing ? [table] : [])
    }

    /// The tables of `batch` whose cursor is behind one its gateway sent before, outside a
    /// resync: its data directory was restored from a backup, and it is answered with
    /// `resync` pages so that it gets back its own rows written after the backup.
    ///
    /// Only pulls (batches without changes) are weighed: they are always built from the
    /// gateway's cursors of the moment, where a batch with changes may be a resend.
    func regressed(_ batch: BatchRequest) async throws -> [String] {
        guard batch.sections.isEmpty else { return [] }
        return try await regressed(
            gateway: batch.gateway, cursors: batch.since.entries.filter { !batch.resyncing.contains($0.table) })
    }

    /// The tables whose cursor in `cursors` is behind one `gateway` sent before (see above):
    /// a notify answer must not carry their changes inline, which would skip the resync.
    func regressed(gateway: String, cursors: [(table: String, version: Int64)]) async throws -> [String] {
        try await load()
        return state.withLock { state in
            cursors.compactMap { table, version in
                guard version > 0, let known = state.known[Key(gateway: gateway, table: table)], version < known.version
                else { return nil }
                return table
            }
        }
    }

    /// Reads the stored cursors once, under what this node saw since it started.
    private func load() async throws {
        guard !state.withLock({ $0.loaded }) else { return }
        let stored = try await store.gatewayCursors()
        state.withLock { state in
            guard !state.loaded else { return }
            for cursor in stored {
                let key = Key(gateway: cursor.gateway, table: cursor.table)
                if cursor.seenAt > state.known[key]?.seenAt ?? .min { state.known[key] = cursor }
            }
            state.loaded = true
        }
    }

    /// Writes the cursors seen since the last flush to the store.
    public func flush() async throws {
        let pending = state.withLock { state in
            defer { state.unflushed.removeAll() }
            return state.unflushed.compactMap { state.known[$0] }
        }
        do {
            try await store.recordCursors(pending)
        } catch {
            state.withLock { state in
                for cursor in pending { state.unflushed.insert(Key(gateway: cursor.gateway, table: cursor.table)) }
            }
            throw error
        }
    }

    /// One pass: flushes the cursors, then purges what every table may lose; returns the
    /// tombstones purged per table.
    @discardableResult
    public func compact() async throws -> [String: Int64] {
        try await flush()
        let at = now()
        let cursors = try await store.gatewayCursors()
        var report: [String: Int64] = [:]
        for table in tables {
            let ttl = table.lifecycle.tombstoneTTL.milliseconds
            let active = cursors.filter { $0.table == table.name && $0.seenAt >= at - ttl }
            let bound = active.map(\.version).min() ?? Int64.max
            let purged = try await store.purgeTombstones(table: table.name, upTo: bound, before: at - ttl)
            if purged > 0 { report[table.name] = purged }
        }
        state.withLock { state in
            for (table, count) in report { state.purged[table, default: 0] += count }
        }
        if !report.isEmpty {
            afterPurge()
            logger.info("tombstone compaction", metadata: ["purged": "\(report.values.reduce(0, +))"])
        }
        return report
    }

    /// Tombstones purged per table since start.
    var purged: [String: Int64] { state.withLock { $0.purged } }

    /// Every gateway's cursors: the store's, with this node's newer sightings over them.
    func cursors() async throws -> [GatewayCursor] {
        var merged: [Key: GatewayCursor] = [:]
        for cursor in try await store.gatewayCursors() { merged[Key(gateway: cursor.gateway, table: cursor.table)] = cursor }
        for (key, cursor) in state.withLock({ $0.known }) where cursor.seenAt >= merged[key]?.seenAt ?? .min {
            merged[key] = cursor
        }
        return merged.values.sorted { ($0.gateway, $0.table) < ($1.gateway, $1.table) }
    }
}
