import DallyHTTP
import DallyCore
import DallyStore
import Hummingbird

/// Paged reads and the long-poll changes feed:
/// - `GET /v1/tables/{table}/rows?since=&limit=&where=col:value&include_deleted=`
/// - `GET /v1/tables/{table}/changes?since=&limit=&wait=&where=col:value`
/// - `GET /v1/changes?tables=a,b&since=&limit=&wait=&where=col:value`
///
/// All page by local sequence: the answer's `next_since` is the cursor for the next call, and
/// `more` says whether rows remain beyond this page. A token pinned to a scope reads only rows
/// in it: its scope is ANDed with any `where=`.
///
/// A filtered feed (a `where=`, or a scoped token) gives the rows that match and, as
/// tombstone-shaped entries with `"left":true` (``LeftEntry``), the rows that matched at the cursor and no longer
/// do; its `next_since` passes the rows it skipped. Its long-poll answers only when such an
/// entry exists: woken by a commit to its tables, it reads the page, and with nothing in it
/// parks again from the new cursor until its wait runs out.
struct FeedRoutes: Sendable {
    let access: TableAccess
    let hub: ChangeHub
    let pageCache: SharedLoads<String, CachedPage>
    let maxPageRows: Int
    let maxWait: Duration
    static let defaultPageRows = 100

    func register(on router: Router<DallyRequestContext>) {
        router.get("/v1/tables/:table/rows") { request, context in try await rows(request, context) }
        router.get("/v1/tables/:table/changes") { request, context in
            let schema = try access.schema(request, context, write: false)
            return try await changes(request, context, tables: [schema.name])
        }
        router.get("/v1/changes") { request, context in try await changes(request, context, tables: nil) }
    }

    func rows(_ request: Request, _ context: DallyRequestContext) async throws -> Response {
        let schema = try access.schema(request, context, write: false)
        let query = try QueryParameters(request, allowed: ["since", "limit", "where", "include_deleted"])
        let since = try query.since()
        try access.store.requireCursor(since, tables: [schema.name])
        try await access.store.requireKnownCursor(since)
        var rowQuery = RowQuery(
            table: schema.name,
            since: since,
            limit: try query.limit(fallback: Self.defaultPageRows, maximum: maxPageRows),
            filters: try query.filters(schema: schema),
            includeDeleted: try query.bool("include_deleted", fallback: false)
        )
        rowQuery.scope.and(try access.authorizer.scope(of: request, table: schema.name))
        let page = try await access.store.rows(rowQuery)
        // Checked again after the read: a compaction that purged past `since` meanwhile raised
        // the horizon before its deletes committed.
        try access.store.requireCursor(since, tables: [schema.name])
        return JSONResponse.make(encode(page, key: "rows", since: since, withTable: false))
    }

    /// Answers at once when a change after `since` exists; otherwise parks on the hub until one
    /// arrives, the wait runs out, the client leaves or the gateway stops.
    func changes(_ request: Request, _ context: DallyRequestContext, tables requested: [String]?) async throws -> Response {
        // `tables=` chooses the tables of `/v1/changes`; on a table's own feed it would be ignored.
        let allowed: Set<String> = requested == nil ? ["since", "limit", "wait", "tables", "where"] : ["since", "limit", "wait", "where"]
        let query = try QueryParameters(request, allowed: allowed)
        let tables = try requested ?? resolveTables(request, query.list("tables"))
        let since = try query.since()
        let limit = try query.limit(fallback: Self.defaultPageRows, maximum: maxPageRows)
        let wait = try query.wait(maximum: maxWait)
        try access.store.requireCursor(since, tables: tables)
        try await access.store.requireKnownCursor(since)
        let filters = try feedFilters(request, query, tables: tables)
        let read = FeedRead(tables: tables, since: since, limit: limit, filters: filters)
        var cursor = since

        if hub.latest(of: tables) > since || wait == .zero {
            let first = try await page(read, cursor: since)
            if !first.isEmpty || wait == .zero || read.filters.isEmpty { return JSONResponse.make(first.body) }
            cursor = first.nextSince
        }
        // A filtered read parks again after a commit that gave it nothing, until its deadline.
        let deadline = ContinuousClock.now.advanced(by: wait)
        let hub = self.hub
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { break }
            let waiter = Waiter()
            let parked = cursor
            let reason = try await DisconnectWatcher.watching(context.channel, onDisconnect: { waiter.resume(.disconnected) }) {
                try await hub.wait(waiter, tables: tables, since: parked, timeout: remaining)
            }
            guard reason == .changed else { break }
            let next = try await page(read, cursor: cursor)
            if !next.isEmpty || read.filters.isEmpty { return JSONResponse.make(next.body) }
            cursor = max(cursor, next.nextSince)
        }
        return JSONResponse.make(encode(Page(rows: [], nextSince: cursor, more: false), key: "changes", since: since, withTable: true))
    }

    /// The `where=` clauses (each on a column with a move log, see ``FeedColumns``) ANDed with
    /// the token's scope, for each of `tables` that has a condition.
    private func feedFilters(_ request: Request, _ query: QueryParameters, tables: [String]) throws(DallyError) -> [String: RowFilter] {
        var filters: [String: RowFilter] = [:]
        for table in tables {
            guard let schema = access.store.schema(table) else { continue }
            let clauses = try query.filters(schema: schema)
            for clause in clauses where !schema.scopeColumns.contains(clause.column) {
                throw DallyError(
                    .badQuery,
                    "the changes feed of '\(table)' cannot filter on '\(clause.column)'; list it in the table's scope_columns to filter feeds on it",
                    field: "where")
            }
            var filter = RowFilter(equalities: clauses)
            filter.and(try access.authorizer.scope(of: request, table: table))
            if !filter.isEmpty { filters[table] = filter }
        }
        return filters
    }

    /// `tables=a,b`: each must exist and be readable; absent, every table the token may read.
    func resolveTables(_ request: Request, _ names: [String]?) throws(DallyError) -> [String] {
        guard case .client(let client) = try access.authorizer.principal(of: request) else {
            throw DallyError(.forbidden, "the admin token is for /stats and /metrics; use a client token for tables")
        }
        if let names, names.isEmpty {
            throw DallyError(
                .badQuery, "'tables' names no table: list them (tables=orders,notes), or leave it out for all",
                field: "tables")
        }
        // Each table named once: `tables=orders,orders,…` 5,000 times read the table 5,000 times
        // over (2.3 s for one request).
        var named: Set<String> = []
        let tables = (names ?? access.store.tableNames.filter(client.mayRead)).filter { named.insert($0).inserted }
        guard !tables.isEmpty else { throw DallyError(.forbidden, "token '\(client.name)' may read no table") }
        for table in tables {
            guard access.store.schema(table) != nil else {
                throw DallyError(.unknownTable, "no table named '\(table)'", field: "tables")
            }
            try access.authorizer.requireTable(request, table: table, write: false)
        }
        return tables
    }

    /// The encoded page of `read` from `cursor`, shared with equal reads.
    private func page(_ read: FeedRead, cursor: Int64) async throws -> CachedPage {
        let generation = hub.latest(of: read.tables)
        let store = access.store
        return try await pageCache.value(for: read.cacheKey(cursor: cursor), generation: generation) {
            let page = try await store.changes(tables: read.tables, since: cursor, limit: read.limit, filters: read.filters)
            // Checked after the read too: a compaction purging past `since` meanwhile raised the
            // horizon before its deletes committed.
            try store.requireCursor(read.since, tables: read.tables)
            let body = ByteBuffer(bytes: encode(page, key: "changes", since: read.since, withTable: true).bytes)
            return CachedPage(body: body, nextSince: page.nextSince, isEmpty: page.rows.isEmpty)
        }.value
    }

    private func encode(_ page: Page, key: StaticString, since: Int64, withTable: Bool) -> JSONWriter {
        var writer = JSONWriter(capacity: 128 + page.rows.count * 128)
        writer.raw("{\"")
        writer.raw(key)
        writer.raw("\":[")
        var first = true
        for entry in page.rows {
            guard let schema = access.store.schema(entry.table) else { continue }
            if !first { writer.raw(",") }
            first = false
            if page.left.contains(entry.row.seq) {
                LeftEntry(table: entry.table, id: entry.row.id, seq: entry.row.seq, updatedAt: entry.row.updatedAt).write(to: &writer)
            } else {
                entry.row.write(to: &writer, schema: schema, table: withTable ? entry.table : nil)
            }
        }
        writer.raw("],\"since\":")
        writer.int(since)
        writer.raw(",\"next_since\":")
        writer.int(page.nextSince)
        writer.raw(",\"more\":")
        writer.bool(page.more)
        writer.raw("}")
        return writer
    }

}
