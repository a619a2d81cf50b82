import DallyCore

/// One page of a table's cloud changes in version order: the downstream half of the protocol,
/// served by `GET /v1/tables/{t}/changes` and piggybacked on every batch answer.
///
/// `version` is the cursor for the next page: the version of the last row when `more` is true,
/// else the table's version when the page was read (which may be past the last row, when the
/// newest changes came from the asking replica and were left out).
public struct ChangePage: Sendable, Equatable {
    public var table: String
    /// The columns every live row's values follow, in order: the cloud's schema.
    public var columns: [String]
    public var since: Int64
    public var version: Int64
    public var more: Bool
    public var rows: [ChangedRow]
    /// The cloud served this page from version 0 rather than from `since`: the reader's
    /// cursor was behind the table's horizon (tombstones after it were purged) or ahead of the
    /// table's version (the cloud was restored from an older backup). The reader pulls the
    /// table again from scratch and removes the clean rows the pull does not bring
    /// (PROTOCOL.md §4.8).
    public var resync = false

    public init(table: String, columns: [String], since: Int64, version: Int64, more: Bool, rows: [ChangedRow]) {
        self.table = table
        self.columns = columns
        self.since = since
        self.version = version
        self.more = more
        self.rows = rows
    }

    /// A row as the cloud holds it after a change: `[id, version, updated_at, deleted, value…]`
    /// on the wire, with no values for a tombstone.
    public struct ChangedRow: Sendable, Equatable {
        public var id: String
        public var version: Int64
        public var updatedAt: Int64
        public var deleted: Bool
        /// The row changed so that it left the asking gateway's scope (PROTOCOL.md §7.4):
        /// `[id, version, updated_at, "left"]` on the wire, with no values. The gateway drops
        /// its copy; nothing was deleted.
        public var left: Bool
        public var values: [JSONValue]
        /// The replica that wrote the row last, when the cloud read it to share the page among
        /// gateways (``ChangePage/leavingOut(replica:)``); never on the wire.
        public var origin: String?

        public init(
            id: String, version: Int64, updatedAt: Int64, deleted: Bool, left: Bool = false, values: [JSONValue],
            origin: String? = nil
        ) {
            self.id = id
            self.version = version
            self.updatedAt = updatedAt
            self.deleted = deleted
            self.left = left
            self.values = values
            self.origin = origin
        }

        /// Rows are equal as the wire carries them: `origin` is the cloud's bookkeeping.
        public static func == (a: ChangedRow, b: ChangedRow) -> Bool {
            a.id == b.id && a.version == b.version && a.updatedAt == b.updatedAt && a.deleted == b.deleted
                && a.left == b.left && a.values == b.values
        }

        /// Whether the row carries values: neither a tombstone nor a row that left the scope.
        public var hasValues: Bool { !deleted && !left }
    }

    public func write(to writer: inout JSONWriter) {
        writer.raw("{\"table\":")
        writer.string(table)
        // A page with no live rows needs no columns: most answers to a gateway that is the
        // only writer are such pages, one per table, and the names are most of their bytes.
        if rows.contains(where: \.hasValues) {
            writer.raw(",\"columns\":[")
            for (i, column) in columns.enumerated() {
                if i > 0 { writer.raw(",") }
                writer.string(column)
            }
            writer.raw("]")
        }
        writer.raw(",\"since\":")
        writer.int(since)
        writer.raw(",\"version\":")
        writer.int(version)
        writer.raw(",\"more\":")
        writer.bool(more)
        if resync { writer.raw(",\"resync\":true") }
        writer.raw(",\"rows\":[")
        for (r, row) in rows.enumerated() {
            if r > 0 { writer.raw(",") }
            writer.raw("[")
            writer.string(row.id)
            writer.raw(",")
            writer.int(row.version)
            writer.raw(",")
            writer.int(row.updatedAt)
            writer.raw(",")
            if row.left {
                writer.raw("\"left\"")
            } else {
                writer.bool(row.deleted)
            }
            if row.hasValues {
                for value in row.values {
                    writer.raw(",")
                    writer.value(value)
                }
            }
            writer.raw("]")
        }
        writer.raw("]}")
    }

    public func encode() -> [UInt8] {
        var writer = JSONWriter(capacity: 128 + rows.count * 64)
        write(to: &writer)
        return writer.bytes
    }

    /// The pages of an answer's `changes` array (`path` names the array).
    public static func decode(list: [JSONValue], path: String) throws(DallyError) -> [ChangePage] {
        var pages: [ChangePage] = []
        for (i, page) in list.enumerated() { pages.append(try decode(page, path: "\(path)[\(i)]")) }
        return pages
    }

    public static func decode(_ document: JSONValue, path: String = "") throws(DallyError) -> ChangePage {
        let object = try WireObject(document, path: path)
        let table = try WireError.tableName(try object.required("table"), path: object.childPath("table"))
        var columns: [String] = []
        for (c, name) in try object.optionalArray("columns").enumerated() {
            guard case .string(let column) = name else {
                throw WireError.malformed(object.childPath("columns[\(c)]"), "expected a column name")
            }
            columns.append(column)
        }
        var rows: [ChangedRow] = []
        for (r, element) in try object.array("rows").enumerated() {
            // Spelled only for an error: built for every row of a page, it was work for nothing.
            func rowPath() -> String { object.childPath("rows[\(r)]") }
            guard case .array(let items) = element, items.count >= 4,
                case .string(let id) = items[0], case .int(let updatedAt) = items[2]
            else {
                throw WireError.malformed(rowPath(), "expected [id, version, updated_at, deleted, value…]")
            }
            let deleted: Bool
            let left: Bool
            switch items[3] {
            case .bool(let flag): (deleted, left) = (flag, false)
            case .string("left"): (deleted, left) = (false, true)
            default: throw WireError.malformed("\(rowPath())[3]", "expected true, false or \"left\"")
            }
            let version = try WireError.version(items[1], path: "\(rowPath())[1]")
            let valueCount = deleted || left ? 0 : columns.count
            guard items.count == 4 + valueCount else {
                throw WireError.malformed(rowPath(), "expected \(valueCount) values")
            }
            rows.append(
                ChangedRow(
                    id: id, version: version, updatedAt: updatedAt, deleted: deleted, left: left,
                    values: Array(items[4...])))
        }
        var page = ChangePage(
            table: table, columns: columns,
            since: try WireError.version(try object.required("since"), path: object.childPath("since")),
            version: try WireError.version(try object.required("version"), path: object.childPath("version")),
            more: try object.bool("more"), rows: rows)
        if object.optional("resync") != nil { page.resync = try object.bool("resync") }
        return page
    }
}
