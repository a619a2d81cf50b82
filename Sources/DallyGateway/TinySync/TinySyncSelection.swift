import DallyCore

/// Which of the rows read for a TinySync answer it carries, and the sequence its mark records.
///
/// An answer carries at most `cap` rows over all its entities. Past that it stops at a
/// sequence boundary: the mark records the last sequence carried, and the client's next sync
/// resumes there, so a large backlog arrives over several syncs and none is skipped. Rows the
/// request itself just wrote are left out (the client has them), unless changed again since.
///
/// ```swift
/// let selection = TinySyncSelection(fetched: [postRows], through: 120, cap: 1000,
///                                   ownWrites: [.init(entity: 0, id: "521f…", seq: 118)])
/// selection.rows[0]   // postRows without the client's own row
/// ```
struct TinySyncSelection: Sendable {
    /// A row this request wrote: which entity, its id, the sequence the write took.
    struct OwnWrite: Hashable, Sendable {
        let entity: Int
        let id: String
        let seq: Int64
    }

    /// Per entity, in request order, the rows to answer with, in sequence order.
    let rows: [[StoredRow]]
    /// The last sequence the answer covers: its mark's.
    let through: Int64

    /// - Parameters:
    ///   - fetched: per entity, rows with sequences in (since, through], in sequence order,
    ///     at most `cap + 1` each.
    ///   - through: the sequence the rows were read up to.
    init(fetched: [[StoredRow]], through: Int64, cap: Int, ownWrites: Set<OwnWrite>) {
        var merged: [(entity: Int, row: StoredRow)] = []
        for (entity, rows) in fetched.enumerated() { merged += rows.map { (entity: entity, row: $0) } }
        var end = through
        if merged.count > cap {
            merged.sort { $0.row.seq < $1.row.seq }
            end = cap > 0 ? merged[cap - 1].row.seq : min(through, merged[0].row.seq - 1)
        }
        var rows = Array(repeating: [StoredRow](), count: fetched.count)
        for (entity, row) in merged where row.seq <= end {
            guard !ownWrites.contains(OwnWrite(entity: entity, id: row.id, seq: row.seq)) else { continue }
            rows[entity].append(row)
        }
        self.rows = rows.map { $0.sorted { $0.seq < $1.seq } }
        self.through = end
    }
}
