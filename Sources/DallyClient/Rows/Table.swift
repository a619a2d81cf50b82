import DallyCore

/// One table of the gateway, its rows read and written as `Values`.
///
/// Made by ``DallyClient/table(_:as:)``; cheap, `Sendable`, holds no state but its name.
/// `Values` is encoded as a row's `values` (one member per column, by name; a column left out
/// of a ``put(id:_:expectedSeq:updatedAt:)`` becomes null) and decoded from it.
///
/// For example:
/// ```swift
/// let orders = client.table("orders", as: Order.self)
/// let saved = try await orders.put(id: "o1", Order(customer: "Ada", total: 12.5))
/// try await orders.patch(id: "o1", ["paid": true], expectedSeq: saved.seq)
/// let now = try await orders.get(id: "o1")
/// ```
public struct Table<Values: Codable & Sendable>: Sendable {
    /// The client the table was made from.
    public let client: DallyClient
    /// The table's configured name.
    public let name: String

    /// Creates or replaces row `id`.
    ///
    /// - Parameters:
    ///   - expectedSeq: write only if the row's `seq` is still this (`0`: only if the row does
    ///     not exist); otherwise ``DallyClientError/versionMismatch(current:)``.
    ///   - updatedAt: the writer's clock in ms since 1970 (the gateway's when nil); conflict
    ///     policy `last_writer_wins` compares it.
    /// - Returns: the row as stored, with its new `seq`.
    ///
    /// For example: `let row = try await orders.put(id: "o1", order, expectedSeq: 0)   // create only`.
    @discardableResult
    public func put(id: String, _ values: Values, expectedSeq: Int64? = nil, updatedAt: Int64? = nil) async throws -> Row<Values> {
        try await write("PUT", id: id, RowWriteBody(values: values, updatedAt: updatedAt, expectedSeq: expectedSeq))
    }

    /// Changes some columns of existing row `id` (404 `not_found` if there is none): `changes`
    /// is any `Encodable` keyed by column name, such as a dictionary or a small struct.
    ///
    /// For example: `try await orders.patch(id: "o1", ["paid": true])`.
    @discardableResult
    public func patch(
        id: String, _ changes: some Encodable & Sendable, expectedSeq: Int64? = nil, updatedAt: Int64? = nil
    ) async throws -> Row<Values> {
        try await write("PATCH", id: id, RowWriteBody(values: changes, updatedAt: updatedAt, expectedSeq: expectedSeq))
    }

    /// Deletes row `id`: it stays as a tombstone (answered here, ``Row/deleted`` true) so every
    /// feed sees the deletion. Deleting a tombstone again changes nothing.
    ///
    /// For example: `try await orders.delete(id: "o1")`.
    @discardableResult
    public func delete(id: String, expectedSeq: Int64? = nil) async throws -> Row<Values> {
        let headers = expectedSeq.map { [(name: "If-Match", value: "\"\($0)\"")] } ?? []
        return try await client.call(
            "DELETE", rowEndpoint(id), headers: headers, as: Row<Values>.self)
    }

    /// Row `id`, or nil when it never existed or is deleted.
    ///
    /// For example: `if let row = try await orders.get(id: "o1") { print(row.values?.total) }`.
    public func get(id: String) async throws -> Row<Values>? {
        do {
            return try await client.call("GET", rowEndpoint(id), as: Row<Values>.self)
        } catch let error as DallyClientError where error.code == .notFound {
            return nil
        }
    }

    /// Live rows changed after `since`, in the gateway's sequence order, a page of up to
    /// `pageSize` rows at a time (nil: the gateway's default, 100 or its `limits.max_page_rows`
    /// if lower), fetched as the sequence is iterated.
    ///
    /// - Parameters:
    ///   - matching: equality filters, ANDed: column → value as text (`"true"`, `"12.5"`,
    ///     `"null"`); TEXT, INTEGER, REAL and BOOLEAN columns.
    ///   - includeDeleted: adds tombstones.
    ///
    /// For example:
    /// ```swift
    /// for try await page in orders.pages(matching: ["paid": "true"]) {
    ///     for row in page.rows { print(row.id) }
    ///     saveCursor(page.nextSince)
    /// }
    /// ```
    public func pages(
        since: Int64 = 0, matching: [String: String] = [:], pageSize: Int? = nil, includeDeleted: Bool = false
    ) -> RowPages<Values> {
        var filters = matching.sorted { $0.key < $1.key }.map { ("where", "\($0.key):\($0.value)") }
        if includeDeleted { filters.append(("include_deleted", "true")) }
        return RowPages(table: self, since: since, pageSize: pageSize, filters: filters)
    }

    /// The changes feed of this table: rows and tombstones, in order, forever (see ``ChangeFeed``).
    ///
    /// For example:
    /// ```swift
    /// for try await change in orders.changes(since: savedCursor) {
    ///     apply(change)
    ///     savedCursor = change.seq
    /// }
    /// ```
    public func changes(since: Int64 = 0, options: ChangeFeed<Values>.Options = .init()) -> ChangeFeed<Values> {
        ChangeFeed(client: client, endpoint: Endpoint("v1", "tables", name, "changes"), since: since, options: options)
    }

    /// Sends this table's pending changes to the cloud and pulls it now, whatever its
    /// `max_delay` (write right on the table). See ``SyncAnswer``.
    ///
    /// For example: `if case .queued(let reason) = try await orders.sync() { print(reason) }`.
    @discardableResult
    public func sync() async throws -> SyncAnswer {
        try await client.call("POST", Endpoint("v1", "tables", name, "sync"), as: SyncAnswer.self)
    }

    /// Writes many rows in one transaction; see ``Batch``.
    ///
    /// For example:
    /// ```swift
    /// var batch = Batch<Order>()
    /// batch.create(id: "o3", Order(customer: "Bea", total: 3))
    /// batch.update(id: "o2", ["paid": true])
    /// batch.delete(id: "o1")
    /// let result = try await orders.batch(batch)
    /// for refusal in result.errors { print(refusal.id ?? "?", refusal.code) }
    /// ```
    public func batch(_ batch: Batch<Values>) async throws -> BatchResult {
        try await client.call("POST", Endpoint("v1", "tables", name, "batch"), body: .bytes(try batch.body()), as: BatchResult.self)
    }

    func rowEndpoint(_ id: String) -> Endpoint { Endpoint("v1", "tables", name, "rows", id) }

    private func write(_ method: String, id: String, _ body: some Encodable) async throws -> Row<Values> {
        try await client.call(method, rowEndpoint(id), json: body, as: Row<Values>.self)
    }
}
