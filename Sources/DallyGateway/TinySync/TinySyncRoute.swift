import DallyCore
import DallyHTTP
import DallyStore
import Hummingbird

/// `POST /v1/tinysync`: TinySync's one-request sync — the client's changes up, the rows
/// changed since its `last_synced` within each entity's scope down — on the gateway's replica.
///
/// For example (the request and answer forms: ``TinySyncRequest``, ``TinySyncAnswer``):
///
/// ```sh
/// curl -H "Authorization: Bearer $TOKEN" -d '{"last_synced": null, "entities":
///   [{"name": "post", "scope": {"author_id": "5221…"}, "created": [{"id": "521f…", "body": "Hi"}]}]}' \
///   http://127.0.0.1:8080/v1/tinysync
/// ```
///
/// The steps, and why in this order:
/// 1. The whole request is checked first — envelope, tables, rights, scopes, ids and times —
///    so a malformed one is refused with the place named and changes nothing.
/// 2. The writes commit in one transaction of the replica's group commit (the same path,
///    outbox and commit observers as every local write: they sync to the cloud and wake
///    long-polls), each row answered on its own.
/// 3. The answer's rows are read up to the last committed sequence, from where the client's
///    `last_synced` resumes (its mark), and a new mark records where they stop; its time is
///    the answer's `last_synced`.
struct TinySyncRoute: Sendable {
    let access: TableAccess
    /// The most rows a request may send (`limits.max_rows_per_batch`).
    let maxRows: Int
    /// The most rows an answer carries; a larger backlog follows at the next syncs.
    let maxAnswerRows: Int

    static let defaultMaxAnswerRows = 5000

    func register(on router: Router<DallyRequestContext>) {
        router.post("/v1/tinysync") { request, _ in try await handle(request) }
    }

    func handle(_ request: Request) async throws -> Response {
        _ = try access.authorizer.principal(of: request)
        _ = try QueryParameters(request, allowed: [])
        let sync = try TinySyncRequest(json: try await access.jsonBody(request))
        let plans = try plan(sync, request: request)

        // nil: the answer starts from the beginning (no last_synced, or one before every mark).
        var resumed: Int64?
        if let lastSynced = sync.lastSynced { resumed = try await access.store.tinySyncResumeSeq(for: lastSynced) }
        let since = resumed ?? 0
        // Deletions behind the horizon were purged: the client must start again with a null
        // `last_synced` (checked before anything is saved, so a refused request changes nothing).
        try access.store.requireCursor(since, tables: plans.map(\.schema.name))
        let outcomes = try await access.store.saveTinySync(plans.map { (table: $0.schema.name, writes: $0.writes) })
        var own: Set<TinySyncSelection.OwnWrite> = []
        for (entity, outcome) in outcomes.enumerated() {
            for saved in outcome.saved { own.insert(.init(entity: entity, id: saved.id, seq: saved.seq)) }
        }

        // Everything up to the last committed sequence is visible to a read that starts now.
        var through = access.store.lastSeq
        var fetched: [[StoredRow]] = []
        for plan in plans {
            let includeDeleted = sync.lastSynced != nil
            guard let scope = plan.tokenScope else {
                fetched.append(
                    try await access.store.tinySyncRows(
                        table: plan.schema.name, after: since, through: through, filters: plan.filters,
                        includeDeleted: includeDeleted, limit: maxAnswerRows + 1))
                continue
            }
            let read = try await scopedRows(plan.schema.name, scope: scope, since: since, through: through, includeDeleted: includeDeleted)
            fetched.append(read.rows)
            through = min(through, read.coveredThrough)
        }
        let selection = TinySyncSelection(fetched: fetched, through: through, cap: maxAnswerRows, ownWrites: own)
        let mark = try await access.store.recordTinySyncMark(seq: selection.through)

        var entities: [TinySyncEntityAnswer] = []
        for (index, plan) in plans.enumerated() {
            // A scoped token's rows were read within its scope; the entity's own scope is applied here.
            let live = selection.rows[index].filter { !$0.deleted && (plan.tokenScope == nil || plan.inEntityScope($0)) }
                .map { TinySyncRecord(row: $0, schema: plan.schema) }
            let outcome = outcomes[index]
            var seen: Set<String> = []
            entities.append(
                TinySyncEntityAnswer(
                    name: plan.entity.name, scope: plan.entity.scope,
                    created: resumed == nil ? live : [], updated: resumed == nil ? [] : live,
                    deleted: selection.rows[index].filter(\.deleted).map(\.id),
                    saved: outcome.saved.map { $0.id }.filter { seen.insert($0).inserted },
                    errors: plan.refused.map { TinySyncRowError(id: $0.id, error: $0.error) }
                        + outcome.errors.map { TinySyncRowError(id: $0.id, error: $0.error) }))
        }
        // A mark is the gateway's clock, always within the years ISO 8601 writes.
        let lastSynced = TinySyncTime.format(mark.at) ?? String(mark.at)
        return try JSONResponse.encoded(TinySyncAnswer(lastSynced: lastSynced, entities: entities))
    }

    /// Every entity checked against its table and the caller's rights, before anything is
    /// written: read for every entity (the answer carries its rows), write for one that sends rows.
    private func plan(_ sync: TinySyncRequest, request: Request) throws(DallyError) -> [TinySyncEntityPlan] {
        let total = sync.entities.reduce(0) { $0 + $1.rowCount }
        guard total <= maxRows else {
            throw DallyError(
                .tooManyRows, "a sync request holds at most \(maxRows) rows (limits.max_rows_per_batch); got \(total)",
                field: "entities")
        }
        var plans: [TinySyncEntityPlan] = []
        for entity in sync.entities {
            let field = "\(entity.path).name"
            var scope: TypedScope?
            guard let schema = access.store.schema(entity.name) else {
                throw DallyError(.unknownTable, "no table named '\(entity.name)'", field: field)
            }
            do throws(DallyError) {
                try access.authorizer.requireTable(request, table: schema.name, write: false)
                if entity.rowCount > 0 { try access.authorizer.requireTable(request, table: schema.name, write: true) }
                scope = try access.authorizer.scope(of: request, table: schema.name)
            } catch {
                throw DallyError(error.code, error.message, field: field)
            }
            plans.append(try TinySyncEntityPlan(entity, schema: schema, tokenScope: scope))
        }
        return plans
    }

    /// The rows of `table` a scoped token may be told of, changed in `since+1 … through`: those in
    /// its scope, and (`includeDeleted`) as tombstones those deleted or gone out of its scope
    /// since, which it may hold — the filtered changes feed's rows, through the move log, so that
    /// no deletion outside the scope is listed. `coveredThrough` is where the read stopped: the
    /// last row it carried when more followed, else `through`.
    private func scopedRows(
        _ table: String, scope: TypedScope, since: Int64, through: Int64, includeDeleted: Bool
    ) async throws -> (rows: [StoredRow], coveredThrough: Int64) {
        var filter = RowFilter.all
        filter.and(scope)
        let page = try await access.store.changes(tables: [table], since: since, limit: maxAnswerRows + 1, filters: [table: filter])
        var rows: [StoredRow] = []
        for (_, row) in page.rows where row.seq <= through {
            if page.left.contains(row.seq) || row.deleted {
                guard includeDeleted else { continue }
                rows.append(StoredRow(id: row.id, seq: row.seq, updatedAt: row.updatedAt, deleted: true, version: nil, values: []))
            } else {
                rows.append(row)
            }
        }
        let covered = page.more ? min(through, page.rows.last?.row.seq ?? since) : through
        return (rows, covered)
    }
}
