import DallyCore

/// A batch of row changes sent by a gateway to `POST /v1/batches`: the wire format of
/// `docs/PROTOCOL.md`.
///
/// Each table's section names its columns once; each change is a positional array
/// `[id, base_version, updated_at, op, value…]`, so that a thousand rows of a narrow table cost
/// little more than their values, before compression.
public struct BatchRequest: Sendable, Equatable {
    /// Chosen by the gateway, unique per gateway; a retry reuses it.
    public var batchID: String
    /// The sending gateway's id, as authenticated.
    public var gateway: String
    /// The gateway replica's id. Rows this replica wrote are not echoed back downstream.
    public var replica: String
    /// Per table, the highest cloud version the gateway holds; the answer carries what is newer.
    public var since: TableVersions
    /// Tables the gateway is pulling again from scratch after a `resync` page: their `since`
    /// may be behind the horizon without being refused, since the gateway removes what the
    /// pull does not bring (PROTOCOL.md §4.8).
    public var resyncing: [String] = []
    /// Set by the cloud, never sent: tables whose cursor in `since` is behind one this gateway
    /// sent before, as when its data directory was restored from a backup. Answered with
    /// `resync` pages (``DownstreamStart``).
    public var regressed: [String] = []
    /// The gateway's scopes: its downstream pages hold only these rows (PROTOCOL.md §7.4).
    public var scopes: TableScopes
    public var sections: [Section]

    public init(
        batchID: String, gateway: String, replica: String, since: TableVersions, scopes: TableScopes = TableScopes(),
        sections: [Section]
    ) {
        self.batchID = batchID
        self.gateway = gateway
        self.replica = replica
        self.since = since
        self.scopes = scopes
        self.sections = sections
    }

    /// One table's changes.
    public struct Section: Sendable, Equatable {
        public var table: String
        /// The columns that every `put` change carries, in order.
        public var columns: [String]
        public var changes: [Change]

        public init(table: String, columns: [String], changes: [Change]) {
            self.table = table
            self.columns = columns
            self.changes = changes
        }
    }

    /// The pending state of one row.
    public struct Change: Sendable, Equatable {
        public var id: String
        /// The cloud version the gateway's change started from; nil for a row it created.
        public var baseVersion: Int64?
        /// The writer's clock, milliseconds since 1970; used by `last_writer_wins`.
        public var updatedAt: Int64
        public var deleted: Bool
        /// One value per section column for a put; empty for a delete.
        public var values: [JSONValue]

        public init(id: String, baseVersion: Int64?, updatedAt: Int64, deleted: Bool, values: [JSONValue]) {
            self.id = id
            self.baseVersion = baseVersion
            self.updatedAt = updatedAt
            self.deleted = deleted
            self.values = values
        }
    }

    /// The most characters in a batch, gateway or replica id.
    public static let maxTokenLength = 64

    /// Whether `id` may serve as a batch, gateway or replica id: 1–64 of `A–Z a–z 0–9 - _`.
    public static func isValidToken(_ id: String) -> Bool {
        let bytes = id.utf8
        guard !bytes.isEmpty, bytes.count <= maxTokenLength else { return false }
        return bytes.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2D || b == 0x5F
        }
    }

    /// What the cloud records as the writer of the rows this batch changes: the replica, as
    /// vouched for by the authenticated gateway, so one gateway cannot pose as another's replica.
    public var origin: String { Self.origin(gateway: gateway, replica: replica) }

    public static func origin(gateway: String, replica: String) -> String { "\(gateway)/\(replica)" }

    public var rowCount: Int { sections.reduce(0) { $0 + $1.changes.count } }

    // MARK: - Encoding

    public func encode() -> [UInt8] {
        encode(writtenSections: sections.map(BatchSectionWriter.init))
    }

    /// The body of this batch with `writtenSections` as its sections, in their order: for a
    /// sender that writes its rows straight from storage, with ``sections`` left empty (they
    /// are not written).
    public func encode(writtenSections: [BatchSectionWriter]) -> [UInt8] {
        var writer = JSONWriter(capacity: 256 + writtenSections.reduce(0) { $0 + $1.byteCount })
        writer.raw("{\"batch\":")
        writer.string(batchID)
        writer.raw(",\"gateway\":")
        writer.string(gateway)
        writer.raw(",\"replica\":")
        writer.string(replica)
        writer.raw(",\"since\":")
        since.write(to: &writer)
        if !scopes.isEmpty {
            writer.raw(",\"scopes\":")
            scopes.write(to: &writer)
        }
        if !resyncing.isEmpty {
            writer.raw(",\"resyncing\":[")
            for (i, table) in resyncing.enumerated() {
                if i > 0 { writer.raw(",") }
                writer.string(table)
            }
            writer.raw("]")
        }
        writer.raw(",\"sections\":[")
        for (s, section) in writtenSections.enumerated() {
            if s > 0 { writer.raw(",") }
            section.append(to: &writer)
        }
        writer.raw("]}")
        return writer.bytes
    }

    // MARK: - Decoding

    /// Decodes a batch body: read straight from the bytes when it is well formed
    /// (``BatchBodyReader``), else parsed and checked step by step, which names what is wrong.
    ///
    /// ```swift
    /// let batch = try BatchRequest.decode(body: bytes, maxRows: 10_000)
    /// ```
    public static func decode(body: [UInt8], maxRows: Int) throws(DallyError) -> BatchRequest {
        if let request = BatchBodyReader.read(body, maxRows: maxRows) { return request }
        let document: JSONValue
        do {
            document = try JSONParser.parse(body)
        } catch {
            throw DallyError(error)
        }
        return try decode(document, maxRows: maxRows)
    }

    /// Reads and checks the structure of a batch. Problems with the shape of the message are
    /// errors for the whole batch (`bad_request`); problems with a row's content (an unknown
    /// table or column, a wrong type, a bad id) are the store's to report per row.
    ///
    /// - Parameter maxRows: the most changes accepted across all sections.
    public static func decode(_ document: JSONValue, maxRows: Int) throws(DallyError) -> BatchRequest {
        let root = try WireObject(document, path: "")
        let batchID = try root.string("batch")
        guard isValidToken(batchID) else {
            throw WireError.malformed("batch", "a batch id is 1 to 64 of A-Z a-z 0-9 - _")
        }
        let gateway = try root.string("gateway")
        let replica = try root.string("replica")
        guard isValidToken(replica) else {
            throw WireError.malformed("replica", "a replica id is 1 to 64 of A-Z a-z 0-9 - _")
        }
        let since = try TableVersions.read(root.optional("since") ?? .object([]), path: "since")
        let scopes = try TableScopes.read(root.optional("scopes") ?? .object([]), path: "scopes")
        var sections: [Section] = []
        var rows = 0
        var tables: Set<String> = []
        for (s, element) in try root.array("sections").enumerated() {
            let path = "sections[\(s)]"
            let object = try WireObject(element, path: path)
            let table = try WireError.tableName(try object.required("table"), path: "\(path).table")
            guard tables.insert(table).inserted else {
                throw WireError.malformed("\(path).table", "table '\(table)' has two sections")
            }
            var columns: [String] = []
            for (c, name) in try object.array("columns").enumerated() {
                guard case .string(let column) = name else {
                    throw WireError.malformed("\(path).columns[\(c)]", "expected a column name")
                }
                guard !columns.contains(column) else {
                    throw WireError.malformed("\(path).columns[\(c)]", "column '\(column)' named twice")
                }
                columns.append(column)
            }
            let elements = try object.array("rows")
            rows += elements.count
            guard rows <= maxRows else {
                throw DallyError(.tooManyRows, "a batch may carry at most \(maxRows) rows (limits.max_rows_per_batch)")
            }
            var changes: [Change] = []
            changes.reserveCapacity(elements.count)
            var ids: Set<String> = []
            for (r, row) in elements.enumerated() {
                // The row's path is spelled only for an error (`decodeChange` takes it lazily).
                let change = try decodeChange(row, columns: columns.count, path: "\(path).rows[\(r)]")
                guard ids.insert(change.id).inserted else {
                    throw WireError.malformed("\(path).rows[\(r)]", "row '\(change.id)' appears twice in the section")
                }
                changes.append(change)
            }
            sections.append(Section(table: table, columns: columns, changes: changes))
        }
        var request = BatchRequest(
            batchID: batchID, gateway: gateway, replica: replica, since: since, scopes: scopes, sections: sections)
        for (i, element) in try root.optionalArray("resyncing").enumerated() {
            request.resyncing.append(try WireError.tableName(element, path: "resyncing[\(i)]"))
        }
        return request
    }

    private static func decodeChange(_ row: JSONValue, columns: Int, path: @autoclosure () -> String) throws(DallyError)
        -> Change
    {
        guard case .array(let items) = row, items.count >= 4 else {
            throw WireError.malformed(path(), "expected [id, base_version, updated_at, op, value…]")
        }
        guard case .string(let id) = items[0] else { throw WireError.malformed("\(path())[0]", "expected a row id") }
        var base: Int64?
        if case .null = items[1] {} else { base = try WireError.version(items[1], path: "\(path())[1]") }
        guard case .int(let updatedAt) = items[2] else {
            throw WireError.malformed("\(path())[2]", "expected updated_at in milliseconds")
        }
        switch items[3] {
        case .string("put"):
            guard items.count == 4 + columns else {
                throw WireError.malformed(path(), "a put carries one value per column: \(columns), got \(items.count - 4)")
            }
            return Change(id: id, baseVersion: base, updatedAt: updatedAt, deleted: false, values: Array(items[4...]))
        case .string("delete"):
            guard items.count == 4 else { throw WireError.malformed(path(), "a delete carries no values") }
            return Change(id: id, baseVersion: base, updatedAt: updatedAt, deleted: true, values: [])
        default:
            throw WireError.malformed("\(path())[3]", "expected \"put\" or \"delete\"")
        }
    }
}
