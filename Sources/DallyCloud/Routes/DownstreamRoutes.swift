import DallyCore
import DallyHTTP
import DallySync
import Hummingbird

/// The downstream half of the protocol: `GET /v1/tables/{table}/changes` (pages of changes in
/// version order) and `GET /v1/notify` (a long-poll answered with versions, and with the
/// changes themselves for the tables the gateway takes inline).
///
/// Unscoped pages are read once for every gateway at the same cursor (``SharedPages``): after
/// a change, the whole fleet that follows the table asks for the same one.
struct DownstreamRoutes<C: Clock>: Sendable where C.Duration == Duration {
    let store: any CloudStore
    let authenticator: GatewayAuthenticator
    let hub: NotifyHub<C>
    let pages: SharedPages
    let counters: CloudCounters
    let compaction: TombstoneCompaction
    let clock: C
    let maxPageRows: Int
    let maxWait: Duration

    func register(on router: Router<DallyRequestContext>) {
        router.get("/v1/tables/:table/changes") { request, context in try await changes(request, context) }
        router.get("/v1/notify") { request, context in try await notify(request, context) }
    }

    func changes(_ request: Request, _ context: DallyRequestContext) async throws -> Response {
        let gateway = try await authenticator.gateway(of: request, context: context)
        let table = context.parameters.decoded("table")
        let query = try QueryParameters(request, allowed: ["since", "limit", "replica", "scopes", "resync"])
        let replica = try origin(query, gateway: gateway)
        let scopes = try scopes(query)
        let since = try query.since()
        let resyncing = try query.bool("resync", fallback: false)
        let limit = try query.limit(fallback: maxPageRows, maximum: maxPageRows)
        let answer: [UInt8]
        if scopes[table] == nil, !resyncing {
            guard store.schema(table) != nil else { throw DallyError(.unknownTable, "the cloud has no table '\(table)'") }
            answer = try await pages.page(table: table, since: since, limit: limit).leavingOut(replica: replica).encoded
        } else {
            answer = try await store.changes(
                table: table, since: since, limit: limit, excludingReplica: replica, scope: scopes[table],
                resyncing: resyncing
            ).encode()
        }
        compaction.saw(gateway: gateway, table: table, since: since, resyncing: resyncing)
        return BodyCoding.response(json: answer, to: request)
    }

    /// Answers `{"versions":{"orders":45}}` with the tables that have changes from other
    /// replicas past the versions given, at once or as soon as there are; `{"versions":{}}`
    /// at the timeout. A table named in `inline` whose changes fit one page comes with that
    /// page (`"changes":[…]`), so the gateway need not pull it. With `stream=1` the answer
    /// goes on: a line per notification until the wait ends (``stream(watch:until:context:)``).
    func notify(_ request: Request, _ context: DallyRequestContext) async throws -> Response {
        let gateway = try await authenticator.gateway(of: request, context: context)
        // Polls held when the cloud began to stop were answered; one asked after is refused
        // with Retry-After, so that gateways do not ask again at once until the server closes.
        guard !hub.isClosed else { throw DallyError(.shuttingDown, "the cloud is shutting down; ask again shortly") }
        let query = try QueryParameters(request, allowed: ["versions", "wait", "replica", "scopes", "inline", "stream"])
        let asked = try TableVersions.parseQuery(Substring(query.string("versions") ?? ""))
        let streamed = try query.bool("stream", fallback: false)
        var watch = NotifyWatch(
            store: store, pages: pages, asked: asked, inline: try inlineTables(query),
            replica: try origin(query, gateway: gateway),
            scopes: try scopes(query), maxPageRows: maxPageRows,
            maxInlineBytes: streamed ? Self.maxStreamedPageBytes : .max)
        let deadline = clock.now.advanced(by: try query.wait(maximum: maxWait))
        // A table taken inline is sent at the gateway's own cursor: it counts as seen for the
        // tombstone horizon, unless it went back (a restored data directory), which a pull
        // must answer with a resync instead.
        watch.takeNotInline(Set(try await compaction.regressed(gateway: gateway, cursors: watch.inlineCursors)))
        compaction.saw(gateway: gateway, since: TableVersions(watch.inlineCursors))
        if streamed { return stream(watch: watch, until: deadline, context: context) }

        while true {
            if let news = try await watch.look() {
                if !news.pages.isEmpty { counters.recordInline(pages: news.pages.count) }
                return BodyCoding.response(
                    json: NotifyAnswer.encode(versions: news.versions, pages: news.pages), to: request)
            }
            guard clock.now < deadline, try await wait(for: watch, until: deadline, context: context) else {
                return Self.answer(TableVersions())
            }
        }
    }

    /// The largest page a stream carries: its lines are not compressed (a poll's answer is), so
    /// a larger change is named for a pull, which is.
    static var maxStreamedPageBytes: Int { 16_384 }

    /// The notify stream: a line per notification, each a document as a long-poll's answer,
    /// until `deadline`, which ends it with `{"versions":{}}` (PROTOCOL.md §7.3.1). The gateway
    /// keeps one request open for many changes: per change and gateway the cloud writes a line
    /// instead of answering one request and parsing the next.
    private func stream(watch: NotifyWatch, until deadline: C.Instant, context: DallyRequestContext)
        -> Response
    {
        Response(
            status: .ok, headers: LineStream.headers,
            body: ResponseBody { writer in
                let waiters = StreamWaiters()
                try await DisconnectWatcher.watching(context.channel, onDisconnect: { waiters.disconnect() }) {
                    var watch = watch
                    while true {
                        if let news = try await watch.look() {
                            // The pages' versions are not taken as the gateway's cursors: a line
                            // cut on its way is never applied, and the gateway's next pull, from
                            // the cursor it holds, would look like a data directory gone back
                            // and be answered with a resync of the whole table. The gateway
                            // says where it stands when it next asks.
                            if !news.pages.isEmpty { counters.recordInline(pages: news.pages.count) }
                            try await writer.write(
                                LineStream.line(NotifyAnswer.encode(versions: news.versions, pages: news.pages)))
                            continue
                        }
                        guard clock.now < deadline, let waiter = waiters.next(),
                            try await park(waiter, for: watch, until: deadline)
                        else { break }
                    }
                }
                try await writer.write(LineStream.line(NotifyAnswer(versions: TableVersions()).encode()))
                try await writer.finish(nil)
            })
    }

    /// Parks a long-poll until a table `watch` follows moves, `deadline`, or the gateway goes
    /// away; false unless a table moved.
    private func wait(for watch: NotifyWatch, until deadline: C.Instant, context: DallyRequestContext) async throws
        -> Bool
    {
        let waiter = Waiter()
        return try await DisconnectWatcher.watching(context.channel, onDisconnect: { waiter.resume(.disconnected) }) {
            try await park(waiter, for: watch, until: deadline)
        }
    }

    private func park(_ waiter: Waiter, for watch: NotifyWatch, until deadline: C.Instant) async throws -> Bool {
        switch await hub.wait(waiter, for: watch.cursors, until: deadline) {
        case nil:
            throw DallyError(.tooManyWaiters, "the cloud holds \(hub.limit) notify long-polls already (limits.max_waiters)")
        case .changed?: return true
        case .timeout?, .disconnected?, .shutdown?: return false
        }
    }

    /// `replica=<id>`, the replica whose own rows the answer leaves out, as the origin its
    /// batches are recorded under; nil when absent. Checked as a batch's `replica` is: any other
    /// text could name no origin (and one with U+0000 no PostgreSQL text at all).
    private func origin(_ query: QueryParameters, gateway: String) throws(DallyError) -> String? {
        guard let replica = query.string("replica") else { return nil }
        guard BatchRequest.isValidToken(replica) else {
            throw DallyError(
                .badQuery, "'replica' must be 1 to 64 of A-Z a-z 0-9 - _: the replica id the gateway's batches carry",
                field: "replica")
        }
        return BatchRequest.origin(gateway: gateway, replica: replica)
    }

    /// `inline=orders,items`: the tables whose changes the gateway takes with the answer.
    private func inlineTables(_ query: QueryParameters) throws(DallyError) -> Set<String> {
        guard let text = query.string("inline"), !text.isEmpty else { return [] }
        var tables: Set<String> = []
        for name in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard Identifier.isValidName(String(name)) else {
                throw DallyError(.badQuery, "inline: '\(name.prefix(80))' is not a table name; send inline=<table>,<table>", field: "inline")
            }
            tables.insert(String(name))
        }
        return tables
    }

    /// The gateway's scopes (`scopes={"orders":{"store_id":["S12"]}}`, PROTOCOL.md §7.4),
    /// checked against the cloud's tables; none when absent.
    private func scopes(_ query: QueryParameters) throws(DallyError) -> [String: TypedScope] {
        guard let text = query.string("scopes") else { return [:] }
        do {
            return try TableScopes.parseQuery(Substring(text)).validated({ store.schema($0) }, field: "scopes")
        } catch {
            throw DallyError(.badQuery, error.message, field: error.field ?? "scopes")
        }
    }

    static func answer(_ versions: TableVersions) -> Response {
        JSONResponse.make(ByteBuffer(bytes: NotifyAnswer(versions: versions).encode()))
    }
}
