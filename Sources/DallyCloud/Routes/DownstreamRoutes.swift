import DallyCore
import DallyHTTP
import DallySync
import Hummingbird

/// The downstream half of the protocol: `GET /v1/tables/{table}/changes` (pages of changes in
/// version order) and `GET /v1/notify` (a long-poll answered with versions only).
struct DownstreamRoutes<C: Clock>: Sendable where C.Duration == Duration {
    let store: any CloudStore
    let authenticator: GatewayAuthenticator
    let hub: NotifyHub<C>
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
        let page = try await store.changes(
            table: table, since: since, limit: try query.limit(fallback: maxPageRows, maximum: maxPageRows),
            excludingReplica: replica, scope: scopes[table], resyncing: resyncing)
        compaction.saw(gateway: gateway, table: table, since: since, resyncing: resyncing)
        return BodyCoding.response(json: page.encode(), to: request)
    }

    /// Answers `{"versions":{"orders":45}}` with the tables that have changes from other
    /// replicas past the versions given, at once or as soon as there are; `{"versions":{}}`
    /// at the timeout.
    func notify(_ request: Request, _ context: DallyRequestContext) async throws -> Response {
        let gateway = try await authenticator.gateway(of: request, context: context)
        let query = try QueryParameters(request, allowed: ["versions", "wait", "replica", "scopes"])
        let asked = try TableVersions.parseQuery(Substring(query.string("versions") ?? ""))
        let scopes = try scopes(query)
        let replica = query.string("replica").map { BatchRequest.origin(gateway: gateway, replica: $0) }
        let deadline = clock.now.advanced(by: try query.wait(maximum: maxWait))
        // Tables the cloud does not have never change; they are left out rather than refused,
        // so one table missing from the cloud's configuration does not stop notifications.
        var cursors: [String: Int64] = [:]
        for entry in asked.entries where store.schema(entry.table) != nil { cursors[entry.table] = entry.version }

        while true {
            let versions = store.versions
            var changed: [(table: String, version: Int64)] = []
            for (table, cursor) in cursors.sorted(by: { $0.key < $1.key }) {
                let current = versions[table] ?? 0
                guard current > cursor else { continue }
                if try await store.hasChanges(table: table, since: cursor, excludingReplica: replica, scope: scopes[table]) {
                    changed.append((table, current))
                } else {
                    // Only the asking replica's own changes: follow on from here.
                    cursors[table] = current
                }
            }
            if !changed.isEmpty || clock.now >= deadline { return Self.answer(TableVersions(changed)) }
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
