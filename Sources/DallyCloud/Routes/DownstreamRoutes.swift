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
        let table = try context.parameters.require("table")
        let query = try QueryParameters(request, allowed: ["since", "limit", "replica", "scopes", "resync"])
        let replica = query.string("replica").map { BatchRequest.origin(gateway: gateway, replica: $0) }
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
    /// page (`"changes":[…]`), so the gateway need not pull it.
    func notify(_ request: Request, _ context: DallyRequestContext) async throws -> Response {
        let gateway = try await authenticator.gateway(of: request, context: context)
        let query = try QueryParameters(request, allowed: ["versions", "wait", "replica", "scopes", "inline"])
        let asked = try TableVersions.parseQuery(Substring(query.string("versions") ?? ""))
        let scopes = try scopes(query)
        var inline = try inlineTables(query)
        let replica = query.string("replica").map { BatchRequest.origin(gateway: gateway, replica: $0) }
        let deadline = clock.now.advanced(by: try query.wait(maximum: maxWait))
        // Tables the cloud does not have never change; they are left out rather than refused,
        // so one table missing from the cloud's configuration does not stop notifications.
        var cursors: [String: Int64] = [:]
        for entry in asked.entries where store.schema(entry.table) != nil { cursors[entry.table] = entry.version }
        // A table taken inline is sent at the gateway's own cursor: it counts as seen for the
        // tombstone horizon, unless it went back (a restored data directory), which a pull
        // must answer with a resync instead.
        let inlineCursors = asked.entries.filter { inline.contains($0.table) && cursors[$0.table] != nil }
        let regressed = try await compaction.regressed(gateway: gateway, cursors: inlineCursors)
        inline.subtract(regressed)
        compaction.saw(gateway: gateway, since: TableVersions(inlineCursors.filter { inline.contains($0.table) }))

        while true {
            let versions = store.versions
            var changed: [(table: String, version: Int64)] = []
            var carried: [[UInt8]] = []
            for (table, cursor) in cursors.sorted(by: { $0.key < $1.key }) {
                let current = versions[table] ?? 0
                guard current > cursor else { continue }
                if let scope = scopes[table] {
                    if try await store.hasChanges(table: table, since: cursor, excludingReplica: replica, scope: scope) {
                        changed.append((table, current))
                    } else {
                        cursors[table] = current
                    }
                    continue
                }
                let (page, encoded) = try await pages.page(table: table, since: cursor, limit: maxPageRows)
                    .leavingOut(replica: replica)
                if page.rows.isEmpty, !page.more, !page.resync {
                    // Only the asking replica's own changes: follow on from here.
                    cursors[table] = max(cursor, page.version)
                    continue
                }
                changed.append((table, current))
                if inline.contains(table), !page.more, !page.resync { carried.append(encoded) }
            }
            if !changed.isEmpty || clock.now >= deadline {
                if !carried.isEmpty { counters.recordInline(pages: carried.count) }
                return BodyCoding.response(
                    json: NotifyAnswer.encode(versions: TableVersions(changed), pages: carried), to: request)
            }
            let waiter = Waiter()
            let wake = try await DisconnectWatcher.watching(context.channel, onDisconnect: { waiter.resume(.disconnected) }) {
                await hub.wait(waiter, for: cursors, until: deadline)
            }
            switch wake {
            case nil:
                throw DallyError(.tooManyWaiters, "the cloud holds \(hub.limit) notify long-polls already (limits.max_waiters)")
            case .changed?: continue
            case .timeout?, .disconnected?, .shutdown?: return Self.answer(TableVersions())
            }
        }
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
