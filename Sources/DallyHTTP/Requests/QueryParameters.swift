import DallyCore
import Hummingbird
import HummingbirdCore

/// Strict reading of query parameters: unknown names and malformed values are refused with
/// `bad_query` naming the parameter, so that a typo (`sinse=`) never silently means "from 0".
public struct QueryParameters {
    private let parameters: FlatDictionary<Substring, Substring>

    public init(_ request: Request, allowed: Set<String>) throws(DallyError) {
        parameters = request.uri.queryParameters
        for (key, _) in parameters where !allowed.contains(String(key)) {
            let takes = allowed.isEmpty ? "no query parameters" : allowed.sorted().joined(separator: ", ")
            throw DallyError(.badQuery, "unknown query parameter '\(key)'; this route takes \(takes)", field: String(key))
        }
        // Read as the first of two, `since=0&since=40` would mean whatever a client's URL builder
        // happened to put first.
        var seen = Set<Substring>()
        for (key, _) in parameters where !Self.repeatable.contains(key) && !seen.insert(key).inserted {
            throw DallyError(.badQuery, "query parameter '\(key)' is given more than once; give it once", field: String(key))
        }
    }

    /// The parameters a request may give more than once: each `where=` is a clause.
    static let repeatable: Set<Substring> = ["where"]

    /// A local sequence cursor: a non-negative integer, 0 when absent.
    public func since() throws(DallyError) -> Int64 {
        guard let text = parameters["since"], !text.isEmpty else { return 0 }
        guard let value = Int64(text), value >= 0 else {
            throw DallyError(.badQuery, "'since' must be a non-negative integer (a cursor from an earlier answer)", field: "since")
        }
        return value
    }

    /// A page size from 1 to `maximum`, `fallback` when absent.
    public func limit(fallback: Int, maximum: Int) throws(DallyError) -> Int {
        guard let text = parameters["limit"] else { return min(fallback, maximum) }
        guard let value = Int(text), (1...maximum).contains(value) else {
            throw DallyError(.badQuery, "'limit' must be an integer from 1 to \(maximum)", field: "limit")
        }
        return value
    }

    /// How long to hold a long-poll: seconds (`25`, `2.5`) or a duration (`30s`, `2m`); zero
    /// when absent; capped at `maximum`.
    public func wait(maximum: Duration) throws(DallyError) -> Duration {
        guard let text = parameters["wait"], !text.isEmpty else { return .zero }
        let duration: Duration
        if let seconds = Double(text), seconds.isFinite, seconds >= 0 {
            duration = .milliseconds(Int64(min(seconds, 86_400) * 1000))
        } else if let parsed = DurationText.parse(String(text)) {
            duration = parsed
        } else {
            throw DallyError(.badQuery, "'wait' must be seconds (e.g. 30) or a duration (e.g. 30s)", field: "wait")
        }
        return min(duration, maximum)
    }

    /// `true`/`false`, `fallback` when absent.
    public func bool(_ name: String, fallback: Bool) throws(DallyError) -> Bool {
        guard let text = parameters[Substring(name)] else { return fallback }
        switch text {
        case "true", "1": return true
        case "false", "0": return false
        default: throw DallyError(.badQuery, "'\(name)' must be true or false", field: name)
        }
    }

    /// The text of a parameter, nil when absent.
    public func string(_ name: String) -> String? {
        parameters[Substring(name)].map(String.init)
    }

    /// A comma-separated list, nil when absent.
    public func list(_ name: String) -> [String]? {
        parameters[Substring(name)].map { $0.split(separator: ",").map(String.init) }
    }

    /// Equality filters `where=col:value` (repeatable), typed by the column.
    ///
    /// The value is read as the column's type: `true`/`false` for BOOLEAN, a number for INTEGER
    /// and REAL, the text as is for TEXT; `null` matches a null value. JSON, BLOB and OBJECT
    /// columns cannot be filtered.
    public func filters(schema: TableSchema) throws(DallyError) -> [(column: String, value: Value)] {
        var filters: [(column: String, value: Value)] = []
        let clauses = parameters[values: "where"]
        // Each clause is a term of the statement's WHERE, which SQLite nests one level deeper
        // per AND: 3,000 clauses went past its depth of 1,000 and failed the read with 500.
        guard clauses.count <= Self.maxFilters else {
            throw DallyError(
                .badQuery, "at most \(Self.maxFilters) 'where' clauses; got \(clauses.count)", field: "where")
        }
        for clause in clauses {
            guard let colon = clause.firstIndex(of: ":") else {
                throw DallyError(.badQuery, "'where' must be column:value", field: "where")
            }
            let name = String(clause[..<colon])
            let text = String(clause[clause.index(after: colon)...])
            guard let column = schema.column(named: name) else {
                throw DallyError(.badQuery, "table '\(schema.name)' has no column '\(name)'", field: "where")
            }
            filters.append((name, try Self.filterValue(text, column: column)))
        }
        return filters
    }

    /// The most `where=` clauses a request takes (they are ANDed, so one a column is all a
    /// filter needs).
    public static let maxFilters = 32

    public static func filterValue(_ text: String, column: Column) throws(DallyError) -> Value {
        if text == "null" { return .null }
        let value: Value? =
            switch column.type {
            case .text: .text(text)
            case .integer: Int64(text).map(Value.integer)
            // A stored REAL is finite (JSON has no NaN or infinity): `nan` or `1e999` could only
            // ever match nothing, which looks like an answer.
            case .real: Double(text).flatMap { $0.isFinite ? Value.real($0) : nil }
            case .boolean: text == "true" ? .boolean(true) : text == "false" ? .boolean(false) : nil
            case .json, .blob, .object: nil
            }
        guard let value else {
            throw DallyError(
                .badQuery, "cannot filter \(column.type.rawValue) column '\(column.name)' by '\(text)'", field: "where")
        }
        return value
    }
}
