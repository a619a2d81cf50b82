/// The recent commits of every table, as NOTIFY tells every node: which versions each took and
/// which replica wrote them. With them a node answers "has this table changed since `v`, by
/// anyone but this replica?" — the question every parked notify long-poll asks on every
/// commit — from memory, instead of one query per gateway per commit.
///
/// The answer errs only towards yes: a row a foreign commit wrote and the asking replica then
/// overwrote still counts, so a gateway may pull a page that turns out empty, but never misses a
/// change. When the commits kept do not cover the versions asked about (a node that just
/// started, a listener that reconnected, a commit older than the last ``capacity``) the
/// answer is nil and the store asks the database.
struct RecentCommits: Sendable {
    /// One table's part of one commit: versions `after + 1 … upTo`, written by `origin`.
    struct Commit: Sendable, Equatable {
        let table: String
        let after: Int64
        let upTo: Int64
        let origin: String
    }

    /// Commits kept per table.
    static let capacity = 512

    /// Per table, by `after`, oldest first.
    private var commits: [String: [Commit]] = [:]

    /// Keeps `commit`, in version order; a commit seen before (this node's own, echoed by
    /// NOTIFY) is kept once.
    mutating func record(_ commit: Commit) {
        var kept = commits[commit.table] ?? []
        guard !kept.contains(where: { $0.after == commit.after }) else { return }
        let place = kept.firstIndex { $0.after > commit.after } ?? kept.endIndex
        kept.insert(commit, at: place)
        if kept.count > Self.capacity { kept.removeFirst(kept.count - Self.capacity) }
        commits[commit.table] = kept
    }

    /// Whether `table` has a commit past `since` by a replica other than `excluding`, as far as
    /// the commits kept tell; nil when they do not cover `since` up to `current`.
    func foreignChange(table: String, since: Int64, current: Int64, excluding: String) -> Bool? {
        var reached = since
        for commit in commits[table] ?? [] where commit.upTo > since {
            guard commit.after <= reached else { return nil }
            if commit.origin != excluding { return true }
            reached = max(reached, commit.upTo)
        }
        return reached >= current ? false : nil
    }
}
