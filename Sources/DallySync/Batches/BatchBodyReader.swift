import DallyCore

/// Reads a well-formed batch body straight into a ``BatchRequest``, without first building a
/// ``JSONValue`` tree of it.
///
/// A 5,000-row body parsed into a tree (an array per row, grown as it was read) and then decoded
/// from it took the cloud ~12 ms of CPU a batch, an eighth of its apply, on the path every batch
/// takes before the store sees it (docs/BENCHMARKS.md, "A long outage's backlog"). This reader
/// takes the happy path only: anything it does not expect (a member named twice, a row that is
/// not `[id, base, updated_at, op, value…]` as the gateway writes it, an escaped op, a limit
/// passed, a bad name) makes it give up, and ``BatchRequest/decode(body:maxRows:)`` decodes the
/// body the careful way, which names the problem and its path. So both accept the same bodies and
/// read them alike (test `BatchBodyReaderTests`); the reader only makes the common case cheap.
struct BatchBodyReader {
    /// Why the reader gave up: the careful decoder takes over.
    struct GaveUp: Error {}

    private let maxRows: Int
    private var rows = 0

    private init(maxRows: Int) { self.maxRows = maxRows }

    /// The batch in `body`, or nil when the careful decoder must read it.
    static func read(_ body: [UInt8], maxRows: Int) -> BatchRequest? {
        var reader = BatchBodyReader(maxRows: maxRows)
        do {
            return try JSONScanner.scan(body) { (scanner: inout JSONScanner) throws(JSONParseError) in
                do {
                    return try reader.request(&scanner)
                } catch let error as JSONParseError {
                    throw error
                } catch {
                    throw scanner.error("given up")
                }
            }
        } catch {
            return nil
        }
    }

    private mutating func request(_ scanner: inout JSONScanner) throws -> BatchRequest {
        var batchID: String?
        var gateway: String?
        var replica: String?
        var since: JSONValue?
        var scopes: JSONValue?
        var resyncing: JSONValue?
        var sections: [BatchRequest.Section]?
        try Self.members(&scanner) { scanner, key in
            switch key {
            case "batch": try Self.once(&batchID, try scanner.string())
            case "gateway": try Self.once(&gateway, try scanner.string())
            case "replica": try Self.once(&replica, try scanner.string())
            case "since": try Self.once(&since, try scanner.value(depth: 1))
            case "scopes": try Self.once(&scopes, try scanner.value(depth: 1))
            case "resyncing": try Self.once(&resyncing, try scanner.value(depth: 1))
            case "sections": try Self.once(&sections, try self.sections(&scanner))
            default: _ = try scanner.value(depth: 1)  // read as the careful decoder would: ignored
            }
        }
        try scanner.end()
        guard let batchID, BatchRequest.isValidToken(batchID), let gateway, let replica,
            BatchRequest.isValidToken(replica), let sections
        else { throw GaveUp() }
        var request = BatchRequest(
            batchID: batchID, gateway: gateway, replica: replica,
            since: try TableVersions.read(since ?? .object([]), path: "since"),
            scopes: try TableScopes.read(scopes ?? .object([]), path: "scopes"), sections: sections)
        if let resyncing {
            guard case .array(let tables) = resyncing else { throw GaveUp() }
            for (i, table) in tables.enumerated() {
                request.resyncing.append(try WireError.tableName(table, path: "resyncing[\(i)]"))
            }
        }
        return request
    }

    private mutating func sections(_ scanner: inout JSONScanner) throws -> [BatchRequest.Section] {
        var sections: [BatchRequest.Section] = []
        var tables: Set<String> = []
        try Self.elements(&scanner) { scanner in
            let section = try self.section(&scanner)
            guard tables.insert(section.table).inserted else { throw GaveUp() }
            sections.append(section)
        }
        return sections
    }

    private mutating func section(_ scanner: inout JSONScanner) throws -> BatchRequest.Section {
        var table: String?
        var columns: [String]?
        var changes: [BatchRequest.Change]?
        try Self.members(&scanner) { scanner, key in
            switch key {
            case "table": try Self.once(&table, try WireError.tableName(.string(try scanner.string()), path: ""))
            case "columns": try Self.once(&columns, try Self.columns(&scanner))
            case "rows": try Self.once(&changes, try self.changes(&scanner, columns: columns?.count))
            default: _ = try scanner.value(depth: 3)
            }
        }
        guard let table, let columns, let changes else { throw GaveUp() }
        // Rows read before their columns are checked against them now.
        for change in changes where !change.deleted && change.values.count != columns.count { throw GaveUp() }
        return BatchRequest.Section(table: table, columns: columns, changes: changes)
    }

    private static func columns(_ scanner: inout JSONScanner) throws -> [String] {
        var columns: [String] = []
        try elements(&scanner) { scanner in
            let column = try scanner.string()
            guard !columns.contains(column) else { throw GaveUp() }
            columns.append(column)
        }
        return columns
    }

    private mutating func changes(_ scanner: inout JSONScanner, columns: Int?) throws -> [BatchRequest.Change] {
        var changes: [BatchRequest.Change] = []
        var ids: Set<String> = []
        try Self.elements(&scanner) { scanner in
            rows += 1
            guard rows <= maxRows else { throw GaveUp() }
            let change = try Self.change(&scanner, columns: columns)
            guard ids.insert(change.id).inserted else { throw GaveUp() }
            changes.append(change)
        }
        return changes
    }

    /// `[id, base_version, updated_at, "put", value…]` or `[id, base_version, updated_at, "delete"]`.
    /// Its values nest as deep as in the tree (a row is at depth 5: body, sections, section, rows,
    /// row), so that both refuse the same nesting.
    private static func change(_ scanner: inout JSONScanner, columns: Int?) throws -> BatchRequest.Change {
        try scanner.expect(UInt8(ascii: "["))
        let id = try scanner.string()
        try scanner.expect(UInt8(ascii: ","))
        let base: Int64? = scanner.takeNull() ? nil : try WireError.version(try scanner.value(depth: 5), path: "")
        try scanner.expect(UInt8(ascii: ","))
        guard case .int(let updatedAt) = try scanner.value(depth: 5) else { throw GaveUp() }
        try scanner.expect(UInt8(ascii: ","))
        if scanner.take(string: "delete") {
            try scanner.expect(UInt8(ascii: "]"))
            return BatchRequest.Change(id: id, baseVersion: base, updatedAt: updatedAt, deleted: true, values: [])
        }
        guard scanner.take(string: "put") else { throw GaveUp() }
        var values: [JSONValue] = []
        values.reserveCapacity(columns ?? 8)
        while try scanner.next(closing: UInt8(ascii: "]")) { values.append(try scanner.value(depth: 5)) }
        if let columns, values.count != columns { throw GaveUp() }
        return BatchRequest.Change(id: id, baseVersion: base, updatedAt: updatedAt, deleted: false, values: values)
    }

    /// Reads the object that comes next, calling `member` with each member's name and the
    /// scanner at its value.
    private static func members(
        _ scanner: inout JSONScanner, _ member: (inout JSONScanner, String) throws -> Void
    ) throws {
        try scanner.expect(UInt8(ascii: "{"))
        if scanner.take(UInt8(ascii: "}")) { return }
        repeat {
            let key = try scanner.string()
            try scanner.expect(UInt8(ascii: ":"))
            try member(&scanner, key)
        } while try scanner.next(closing: UInt8(ascii: "}"))
    }

    /// Reads the array that comes next, calling `element` with the scanner at each element.
    private static func elements(_ scanner: inout JSONScanner, _ element: (inout JSONScanner) throws -> Void) throws {
        try scanner.expect(UInt8(ascii: "["))
        if scanner.take(UInt8(ascii: "]")) { return }
        repeat { try element(&scanner) } while try scanner.next(closing: UInt8(ascii: "]"))
    }

    /// Sets `slot` to `value`; a member named twice is the careful decoder's to judge.
    private static func once<T>(_ slot: inout T?, _ value: T) throws {
        guard slot == nil else { throw GaveUp() }
        slot = value
    }
}
