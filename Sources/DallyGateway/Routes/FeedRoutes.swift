import DallyHTTP
import DallyCore
import DallyStore
import Hummingbird

/// Paged reads and the long-poll changes feed:
/// - `GET /v1/tables/{table}/rows?since=&limit=&where=col:value&include_deleted=`
/// - `GET /v1/tables/{table}/changes?since=&limit=&wait=`
/// - `GET /v1/changes?tables=a,b&since=&limit=&wait=`
///
/// All page by local sequence: the answer's `next_since` is the cursor for the next call, and
/// `more` says whether rows remain beyond this page.
struct FeedRoutes: Sendable {
    let access: TableAccess
    let hub: ChangeHub
    let pageCache: ChangesPageCache
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
        let page = try await access.store.rows(
            RowQuery(
                table: schema.name,
                since: since,
                limit: try query.limit(fallback: Self.defaultPageRows, maximum: maxPageRows),
                filters: try query.filters(schema: schema),
                includeDeleted: try query.bool("include_deleted", fallback: false)
            ))
        // Checked again after the read: a compaction that purged past `since` meanwhile raised
        // the horizon before its deletes committed.
        try access.store.requireCursor(since, tables: [schema.name])
        return JSONResponse.make(encode(page, key: "rows", since: since, withTable: false))
    }

    /// Answers at once when a change after `since` exists; otherwise parks on the hub until one
    /// arrives, the wait runs out, the client leaves or the gateway stops.
    func changes(_ request: Request, _ context: DallyRequestContext, tables requested: [String]?) async throws -> Response {
        let query = try QueryParameters(request, allowed: ["since", "limit", "wait", "tables"])
        let tables = try requested ?? resolveTables(request, query.list("tables"))
        let since = try query.since()
        let limit = try query.limit(fallback: Self.defaultPageRows, maximum: maxPageRows)
        let wait = try query.wait(maximum: maxWait)
        try access.store.requireCursor(since, tables: tables)

        if hub.latest(of: tables) > since || wait == .zero {
            return try await page(tables: tables, since: since, limit: limit)
        }
        let waiter = Waiter()
        let hub = self.hub
        let reason = try await DisconnectWatcher.watching(context.channel, onDisconnect: { waiter.resume(.disconnected) }) {
            try await hub.wait(waiter, tables: tables, since: since, timeout: wait)
        }
        switch reason {
        case .changed: return try await page(tables: tables, since: since, limit: limit)
        case .timeout, .shutdown, .disconnected: return JSONResponse.make(emptyPage(since: since))
        }
    }

    /// `tables=a,b`: each must exist and be readable; absent, every table the token may read.
    func resolveTables(_ request: Request, _ names: [String]?) throws(DallyError) -> [String] {
        guard case .client(let client) = try access.authorizer.principal(of: request) else {
            throw DallyError(.forbidden, "the admin token is for /stats and /metrics; use a client token for tables")
        }
        let tables = names ?? access.store.tableNames.filter(client.mayRead)
        guard !tables.isEmpty else { throw DallyError(.forbidden, "token '\(client.name)' may read no table") }
        for table in tables {
            guard access.store.schema(table) != nil else {
                throw DallyError(.unknownTable, "no table named '\(table)'", field: "tables")
            }
            try access.authorizer.requireTable(request, table: table, write: false)
        }
        return tables
    }

    private func page(tables: [String], since: Int64, limit: Int) async throws -> Response {
        let generation = hub.latest(of: tables)
        let key = "\(tables.joined(separator: ","))|\(since)|\(limit)"
        let store = access.store
        let body = try await pageCache.page(key: key, generation: generation) {
            let page = try await store.changes(tables: tables, since: since, limit: limit)
            try store.requireCursor(since, tables: tables)
            return ByteBuffer(bytes: encode(page, key: "changes", since: since, withTable: true).bytes)
        }
        return JSONResponse.make(body)
    }

    private func encode(_ page: Page, key: StaticString, since: Int64, withTable: Bool) -> JSONWriter {
        var writer = JSONWriter(capacity: 128 + page.rows.count * 128)
        writer.raw("{\"")
        writer.raw(key)
        writer.raw("\":[")
        for (i, entry) in page.rows.enumerated() {
            if i > 0 { writer.raw(",") }
            guard let schema = access.store.schema(entry.table) else { continue }
            entry.row.write(to: &writer, schema: schema, table: withTable ? entry.table : nil)
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

    private func emptyPage(since: Int64) -> JSONWriter {
        encode(Page(rows: [], nextSince: since, more: false), key: "changes", since: since, withTable: true)
    }
}
