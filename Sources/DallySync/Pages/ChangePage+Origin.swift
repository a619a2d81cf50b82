extension ChangePage {
    /// This page as the replica `replica` gets it: without the rows it wrote last (§7.1).
    ///
    /// The cloud reads a page once for every gateway at the same cursor, with each row's
    /// origin, and leaves out each asker's own rows here. The page keeps its `version` and
    /// `more`: the rows left out are behind the cursor it gives, so the next read goes on from
    /// there and misses nothing.
    ///
    /// ```swift
    /// let shared = try await store.changes(table: "orders", since: 40, limit: 1000, excludingReplica: nil)
    /// let mine = shared.leavingOut(replica: "gw-1/r1")   // gw-1/r1's own rows are gone
    /// ```
    public func leavingOut(replica: String) -> ChangePage {
        guard rows.contains(where: { $0.origin == replica }) else { return self }
        var page = self
        page.rows.removeAll { $0.origin == replica }
        return page
    }
}
