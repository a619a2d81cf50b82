/// The changes feed across tables, conflicts, stats and uplinks.
extension DallyClient {
    /// The changes feed across `tables` (nil: every table the token may read), merged in `seq`
    /// order; each change names its ``Row/table``. See ``ChangeFeed``.
    ///
    /// For example:
    /// ```swift
    /// for try await change in client.changes(tables: ["orders", "notes"], since: cursor) {
    ///     print(change.table ?? "", change.id, change.seq)
    /// }
    /// ```
    public func changes(
        tables: [String]? = nil, since: Int64 = 0, options: ChangeFeed<JSONValue>.Options = .init()
    ) -> ChangeFeed<JSONValue> {
        let query = tables.map { [("tables", $0.joined(separator: ","))] } ?? []
        return ChangeFeed(client: self, endpoint: Endpoint(segments: ["v1", "changes"], query: query), since: since, options: options)
    }

    /// Open conflicts and rejected changes, newest first, of the tables the token may read;
    /// `includeSettled` adds those a policy settled.
    ///
    /// For example: `let open = try await client.conflicts(table: "docs")`.
    public func conflicts(table: String? = nil, includeSettled: Bool = false, limit: Int? = nil) async throws -> [Conflict] {
        var query: [(String, String)] = []
        if let table { query.append(("table", table)) }
        if includeSettled { query.append(("all", "true")) }
        if let limit { query.append(("limit", String(limit))) }
        return try await call("GET", Endpoint(segments: ["v1", "conflicts"], query: query), as: ConflictList.self).conflicts
    }

    /// Settles the open conflict of `table`/`id`; answers the row as now stored (404
    /// `not_found` when nothing is open for it).
    ///
    /// For example: `try await client.settle(table: "docs", id: "d1", .takeLocal)`.
    @discardableResult
    public func settle(table: String, id: String, _ settlement: Settlement) async throws -> Row<JSONValue> {
        try await call(
            "POST", Endpoint("v1", "conflicts", table, id), json: SettlementBody(settlement: settlement), as: Row<JSONValue>.self)
    }

    /// Forgets a settled record (`version_mismatch` while it is still open).
    ///
    /// For example: `try await client.forgetConflict(table: "docs", id: "d1")`.
    public func forgetConflict(table: String, id: String) async throws {
        let response = try await send("DELETE", Endpoint("v1", "conflicts", table, id))
        _ = try await response.body.collect(upTo: 1 << 20)
    }

    /// The gateway's `/stats` document (admin token): per table, per uplink, sync, objects.
    /// Keys are listed in docs/API.md; read them by name.
    ///
    /// For example: `let pending = try await admin.stats()["tables"]?["orders"]?["outbox_pending"]`.
    public func stats() async throws -> JSONValue {
        try await call("GET", Endpoint("stats"), as: JSONValue.self)
    }

    /// The gateway's uplinks (admin token).
    ///
    /// For example: `let up = try await admin.uplinks().filter(\.usable)`.
    public func uplinks() async throws -> [UplinkStatus] {
        try await call("GET", Endpoint("v1", "admin", "uplinks"), as: UplinkList.self).uplinks
    }

    /// Sets uplink `name`'s availability override (admin token); answers the uplink as now.
    ///
    /// For example: `try await admin.setUplink("shop-wifi", availability: .auto)`.
    @discardableResult
    public func setUplink(_ name: String, availability: UplinkAvailability) async throws -> UplinkStatus {
        try await call(
            "PUT", Endpoint("v1", "admin", "uplinks", name), json: UplinkOverride(availability: availability),
            as: UplinkStatus.self)
    }
}
