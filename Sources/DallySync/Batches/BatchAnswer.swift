import DallyCore

/// The cloud's answer to a batch: per row, what became of the change, and the downstream
/// changes the gateway has not seen, so that one round trip serves both directions.
public struct BatchAnswer: Sendable, Equatable {
    public var batchID: String
    /// True when the cloud had already applied this batch and answered from its record.
    public var replayed: Bool
    public var results: [SectionResult]
    public var changes: [ChangePage]

    public init(batchID: String, replayed: Bool, results: [SectionResult], changes: [ChangePage]) {
        self.batchID = batchID
        self.replayed = replayed
        self.results = results
        self.changes = changes
    }

    public struct SectionResult: Sendable, Equatable {
        public var table: String
        public var rows: [RowResult]

        public init(table: String, rows: [RowResult]) {
            self.table = table
            self.rows = rows
        }
    }

    /// What became of one change.
    public enum RowResult: Sendable, Equatable {
        /// Applied; the row is now at `version`.
        case accepted(id: String, version: Int64)
        /// The cloud's row had moved past the change's base version; the table's policy decided.
        case conflict(id: String, Conflict)
        /// Not applied, and retrying will not help until something changes (a schema, a value).
        case rejected(id: String, RowRejection)

        public var id: String {
            switch self {
            case .accepted(let id, _), .conflict(let id, _), .rejected(let id, _): id
            }
        }
    }

    /// Who won a conflict.
    public enum Winner: String, Sendable {
        /// The gateway's change was applied over the cloud's row.
        case client
        /// The cloud's row stays; the gateway's change was dropped.
        case server
        /// Policy `manual`: the cloud's row stays and the gateway keeps its change aside until an
        /// app resolves the conflict.
        case none
    }

    public struct Conflict: Sendable, Equatable {
        public var policy: ConflictPolicy
        public var winner: Winner
        /// The row's version after the batch: the change's new version when the client won,
        /// else the cloud row's version.
        public var version: Int64
        /// The cloud's row the change conflicted with, values in the section's column order.
        public var server: ChangePage.ChangedRow

        public init(policy: ConflictPolicy, winner: Winner, version: Int64, server: ChangePage.ChangedRow) {
            self.policy = policy
            self.winner = winner
            self.version = version
            self.server = server
        }
    }

    public struct RowRejection: Sendable, Equatable {
        /// A stable code from the error table (`unknown_table`, `unknown_column`, `wrong_type`, …).
        public var code: String
        public var message: String
        public var field: String?

        public init(code: String, message: String, field: String?) {
            self.code = code
            self.message = message
            self.field = field
        }

        public init(_ error: DallyError) {
            self.init(code: error.code.rawValue, message: error.message, field: error.field)
        }
    }

    // MARK: - Encoding

    public func encode() -> [UInt8] {
        var writer = JSONWriter(capacity: 256)
        writer.raw("{\"batch\":")
        writer.string(batchID)
        writer.raw(",\"replayed\":")
        writer.bool(replayed)
        writer.raw(",\"results\":")
        Self.writeResults(results, to: &writer)
        writer.raw(",\"changes\":[")
        for (i, page) in changes.enumerated() {
            if i > 0 { writer.raw(",") }
            page.write(to: &writer)
        }
        writer.raw("]}")
        return writer.bytes
    }

    /// The `results` array alone: what the cloud keeps to answer a retried batch.
    public static func encodeResults(_ results: [SectionResult]) -> [UInt8] {
        var writer = JSONWriter(capacity: 64 + results.reduce(0) { $0 + $1.rows.count * 24 })
        writeResults(results, to: &writer)
        return writer.bytes
    }

    static func writeResults(_ results: [SectionResult], to writer: inout JSONWriter) {
        writer.raw("[")
        for (s, section) in results.enumerated() {
            if s > 0 { writer.raw(",") }
            writer.raw("{\"table\":")
            writer.string(section.table)
            writer.raw(",\"rows\":[")
            var r = 0
            while r < section.rows.count {
                if r > 0 { writer.raw(",") }
                let row = section.rows[r]
                if case .accepted(_, let version) = row {
                    // A run of accepted rows at consecutive versions: `[count, first version]`,
                    // without ids, which the client has in the same order in its batch.
                    var count = 1
                    while r + count < section.rows.count,
                        case .accepted(_, let next) = section.rows[r + count], next == version + Int64(count)
                    {
                        count += 1
                    }
                    writer.raw("[")
                    writer.int(Int64(count))
                    writer.raw(",")
                    writer.int(version)
                    writer.raw("]")
                    r += count
                    continue
                }
                r += 1
                writer.raw("[")
                writer.string(row.id)
                switch row {
                case .accepted:
                    break
                case .conflict(_, let conflict):
                    writer.raw(",\"conflict\",{\"policy\":")
                    writer.string(conflict.policy.rawValue)
                    writer.raw(",\"winner\":")
                    writer.string(conflict.winner.rawValue)
                    writer.raw(",\"version\":")
                    writer.int(conflict.version)
                    writer.raw(",\"server\":")
                    let server = conflict.server
                    writer.raw("[")
                    writer.string(server.id)
                    writer.raw(",")
                    writer.int(server.version)
                    writer.raw(",")
                    writer.int(server.updatedAt)
                    writer.raw(",")
                    writer.bool(server.deleted)
                    for value in server.deleted ? [] : server.values {
                        writer.raw(",")
                        writer.value(value)
                    }
                    writer.raw("]}")
                case .rejected(_, let rejection):
                    writer.raw(",\"error\",{\"code\":")
                    writer.string(rejection.code)
                    writer.raw(",\"message\":")
                    writer.string(rejection.message)
                    if let field = rejection.field {
                        writer.raw(",\"field\":")
                        writer.string(field)
                    }
                    writer.raw("}")
                }
                writer.raw("]")
            }
            writer.raw("]}")
        }
        writer.raw("]")
    }

    // MARK: - Decoding

    /// Reads an answer to the batch `outline` describes. Accepted rows come as runs without ids
    /// (`[count, first version]`), so the outline, the batch's row ids in order, is what names
    /// them; an answer whose sections or rows do not line up with it is malformed.
    public static func decode(_ document: JSONValue, outline: BatchOutline) throws(DallyError) -> BatchAnswer {
        let root = try WireObject(document, path: "")
        let changes = try ChangePage.decode(list: try root.array("changes"), path: "changes")
        return BatchAnswer(
            batchID: try root.string("batch"), replayed: try root.bool("replayed"),
            results: try decodeResults(try root.required("results"), outline: outline), changes: changes)
    }

    /// Reads a `results` array (an answer's, or one the cloud stored) for the batch `outline`
    /// describes.
    public static func decodeResults(_ document: JSONValue, outline: BatchOutline) throws(DallyError) -> [SectionResult] {
        guard case .array(let sections) = document else { throw WireError.malformed("results", "expected an array") }
        guard sections.count == outline.sections.count else {
            throw WireError.malformed("results", "expected \(outline.sections.count) sections, one per batch section")
        }
        var results: [SectionResult] = []
        for (s, element) in sections.enumerated() {
            let object = try WireObject(element, path: "results[\(s)]")
            let expected = outline.sections[s]
            let table = try object.string("table")
            guard table == expected.table else {
                throw WireError.malformed("results[\(s)].table", "expected '\(expected.table)', the batch's section \(s)")
            }
            var rows: [RowResult] = []
            rows.reserveCapacity(expected.ids.count)
            for (r, item) in try object.array("rows").enumerated() {
                let path = object.childPath("rows[\(r)]")
                if case .array(let run) = item, run.count == 2, case .int(let count) = run[0] {
                    let first = try WireError.version(run[1], path: "\(path)[1]")
                    guard count >= 1, count <= expected.ids.count - rows.count else {
                        throw WireError.malformed("\(path)[0]", "a run of \(count) accepted rows does not fit the batch's section")
                    }
                    for k in 0..<Int(count) {
                        rows.append(.accepted(id: expected.ids[rows.count], version: first + Int64(k)))
                    }
                    continue
                }
                let row = try decodeRow(item, path: path)
                guard rows.count < expected.ids.count, row.id == expected.ids[rows.count] else {
                    throw WireError.malformed(path, "result for '\(row.id)' is out of the batch's row order")
                }
                rows.append(row)
            }
            guard rows.count == expected.ids.count else {
                throw WireError.malformed("results[\(s)].rows", "\(rows.count) results for \(expected.ids.count) rows")
            }
            results.append(SectionResult(table: table, rows: rows))
        }
        return results
    }

    private static func decodeRow(_ row: JSONValue, path: String) throws(DallyError) -> RowResult {
        guard case .array(let items) = row, items.count == 3, case .string(let id) = items[0],
            case .string(let kind) = items[1]
        else { throw WireError.malformed(path, "expected [id, \"ok\"|\"conflict\"|\"error\", detail]") }
        switch kind {
        case "ok":
            return .accepted(id: id, version: try WireError.version(items[2], path: "\(path)[2]"))
        case "conflict":
            let detail = try WireObject(items[2], path: "\(path)[2]")
            guard let policy = ConflictPolicy(rawValue: try detail.string("policy")),
                let winner = Winner(rawValue: try detail.string("winner"))
            else { throw WireError.malformed("\(path)[2]", "unknown policy or winner") }
            guard case .array(let server) = try detail.required("server"), server.count >= 4,
                case .string(let serverID) = server[0], case .int(let updatedAt) = server[2],
                case .bool(let deleted) = server[3]
            else { throw WireError.malformed("\(path)[2].server", "expected [id, version, updated_at, deleted, value…]") }
            let serverRow = ChangePage.ChangedRow(
                id: serverID, version: try WireError.version(server[1], path: "\(path)[2].server[1]"),
                updatedAt: updatedAt, deleted: deleted, values: Array(server[4...]))
            return .conflict(
                id: id,
                Conflict(
                    policy: policy, winner: winner, version: try WireError.version(try detail.required("version"), path: "\(path)[2].version"),
                    server: serverRow))
        case "error":
            let detail = try WireObject(items[2], path: "\(path)[2]")
            var field: String?
            if case .string(let text) = detail.optional("field") { field = text }
            return .rejected(
                id: id, RowRejection(code: try detail.string("code"), message: try detail.string("message"), field: field))
        default:
            throw WireError.malformed("\(path)[1]", "unknown result '\(kind)'")
        }
    }
}
