import DallyCore

/// Strict access to the members of a JSON document received over the sync protocol.
///
/// Every failure names the path of the offending member (`sections[2].rows[5]`), so that the
/// author of a second client can find the mistake from the error alone.
struct WireObject {
    let members: [JSONMember]
    let path: String

    init(_ value: JSONValue, path: String) throws(DallyError) {
        guard case .object(let members) = value else {
            throw WireError.malformed(path, "expected an object, got \(value.typeName)")
        }
        self.members = members
        self.path = path
    }

    func optional(_ key: String) -> JSONValue? {
        for member in members where member.key == key { return member.value }
        return nil
    }

    func required(_ key: String) throws(DallyError) -> JSONValue {
        guard let value = optional(key) else { throw WireError.malformed(childPath(key), "missing") }
        return value
    }

    func string(_ key: String) throws(DallyError) -> String {
        guard case .string(let text) = try required(key) else {
            throw WireError.malformed(childPath(key), "expected a string")
        }
        return text
    }

    func int(_ key: String) throws(DallyError) -> Int64 {
        guard case .int(let number) = try required(key) else {
            throw WireError.malformed(childPath(key), "expected an integer")
        }
        return number
    }

    func bool(_ key: String) throws(DallyError) -> Bool {
        guard case .bool(let flag) = try required(key) else {
            throw WireError.malformed(childPath(key), "expected true or false")
        }
        return flag
    }

    func array(_ key: String) throws(DallyError) -> [JSONValue] {
        guard case .array(let elements) = try required(key) else {
            throw WireError.malformed(childPath(key), "expected an array")
        }
        return elements
    }

    /// The array at `key`, or an empty one when the member is absent.
    func optionalArray(_ key: String) throws(DallyError) -> [JSONValue] {
        guard optional(key) != nil else { return [] }
        return try array(key)
    }

    func childPath(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }
}

enum WireError {
    static func malformed(_ path: String, _ reason: String) -> DallyError {
        DallyError(.badRequest, "malformed sync message: \(path.isEmpty ? "body" : path): \(reason)", field: path)
    }

    /// A version: a non-negative integer. The path is built only for the error: a batch reads a
    /// version for each of thousands of rows.
    static func version(_ value: JSONValue, path: @autoclosure () -> String) throws(DallyError) -> Int64 {
        guard case .int(let number) = value, number >= 0 else {
            throw malformed(path(), "expected a version (an integer ≥ 0)")
        }
        return number
    }

    /// The name of a table, checked for syntax only: whether it exists is the store's question.
    static func tableName(_ value: JSONValue, path: String) throws(DallyError) -> String {
        guard case .string(let name) = value, Identifier.isValidName(name) else {
            throw malformed(path, "expected a table name")
        }
        return name
    }
}

/// The per-table cursor lists of the protocol (`since` in a batch, `versions` in a notify).
public struct TableVersions: Sendable, Equatable {
    /// Table name and version, in the order given.
    public var entries: [(table: String, version: Int64)]

    public init(_ entries: [(table: String, version: Int64)] = []) { self.entries = entries }

    public subscript(table: String) -> Int64? {
        entries.first { $0.table == table }?.version
    }

    public var isEmpty: Bool { entries.isEmpty }

    public static func == (lhs: TableVersions, rhs: TableVersions) -> Bool {
        lhs.entries.elementsEqual(rhs.entries) { $0.table == $1.table && $0.version == $1.version }
    }

    /// `{"orders":41,"telemetry":0}`.
    func write(to writer: inout JSONWriter) {
        writer.raw("{")
        for (i, entry) in entries.enumerated() {
            if i > 0 { writer.raw(",") }
            writer.key(entry.table)
            writer.int(entry.version)
        }
        writer.raw("}")
    }

    static func read(_ value: JSONValue, path: String) throws(DallyError) -> TableVersions {
        let object = try WireObject(value, path: path)
        var entries: [(table: String, version: Int64)] = []
        var seen: Set<String> = []
        for member in object.members {
            let memberPath = object.childPath(member.key)
            let table = try WireError.tableName(.string(member.key), path: memberPath)
            guard seen.insert(table).inserted else { throw WireError.malformed(memberPath, "table named twice") }
            entries.append((table, try WireError.version(member.value, path: memberPath)))
        }
        return TableVersions(entries)
    }

    /// Query form used by notify: `orders:41,telemetry:0`.
    public var queryText: String {
        entries.map { "\($0.table):\($0.version)" }.joined(separator: ",")
    }

    /// Parses the query form; nil names the reason it is not valid.
    public static func parseQuery(_ text: Substring) throws(DallyError) -> TableVersions {
        var entries: [(table: String, version: Int64)] = []
        var seen: Set<String> = []
        for item in text.split(separator: ",", omittingEmptySubsequences: true) {
            let parts = item.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, Identifier.isValidName(String(parts[0])), let version = Int64(parts[1]),
                version >= 0
            else {
                throw DallyError(.badQuery, "versions: '\(item)' is not table:version", field: "versions")
            }
            guard seen.insert(String(parts[0])).inserted else {
                throw DallyError(.badQuery, "versions: table '\(parts[0])' named twice", field: "versions")
            }
            entries.append((String(parts[0]), version))
        }
        return TableVersions(entries)
    }
}

/// The answer to `GET /v1/notify`: `{"versions":{"orders":45}}`, the tables that changed and
/// their current versions; empty at the timeout.
public struct NotifyAnswer: Sendable, Equatable {
    public var versions: TableVersions
    /// Pages of the changes themselves, for the tables the gateway asked to receive inline
    /// (`inline=`, PROTOCOL.md §7.3) whose changes fit: the gateway applies them as if it had
    /// pulled, and pulls only the tables listed in `versions` without a page.
    public var changes: [ChangePage]

    public init(versions: TableVersions, changes: [ChangePage] = []) {
        self.versions = versions
        self.changes = changes
    }

    public func encode() -> [UInt8] { Self.encode(versions: versions, pages: changes.map { $0.encode() }) }

    /// The answer with `pages` already encoded (each a page of §7.1), as the cloud shares
    /// them among the gateways it answers.
    public static func encode(versions: TableVersions, pages: [[UInt8]]) -> [UInt8] {
        var writer = JSONWriter(capacity: 32 + versions.entries.count * 24 + pages.reduce(0) { $0 + $1.count + 1 })
        writer.raw("{\"versions\":")
        versions.write(to: &writer)
        if !pages.isEmpty {
            writer.raw(",\"changes\":[")
            for (i, page) in pages.enumerated() {
                if i > 0 { writer.raw(",") }
                writer.rawBytes(page)
            }
            writer.raw("]")
        }
        writer.raw("}")
        return writer.bytes
    }

    public static func decode(_ document: JSONValue) throws(DallyError) -> NotifyAnswer {
        let root = try WireObject(document, path: "")
        let changes = try ChangePage.decode(list: try root.optionalArray("changes"), path: "changes")
        return NotifyAnswer(versions: try TableVersions.read(try root.required("versions"), path: "versions"), changes: changes)
    }
}
