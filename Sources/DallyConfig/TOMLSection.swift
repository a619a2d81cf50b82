import DallyCore
import TOMLKit

/// One TOML table being read: typed getters that name the full key path in their errors, and
/// a check that every key present was expected.
///
/// TOMLKit reports a value of the wrong type as missing; these getters look at the value's
/// type themselves so that the message says "wrong type".
struct TOMLSection {
    let table: TOMLTable
    /// The dotted path of this table, "" for the root.
    let path: String

    init(_ table: TOMLTable, path: String) {
        self.table = table
        self.path = path
    }

    func keyPath(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// Whether the table sets `key`, whatever its type.
    func has(_ key: String) -> Bool { table[key] != nil }

    /// Refuses keys that are not in `allowed`, naming the first unknown one and the known ones.
    func refuseUnknownKeys(_ allowed: [String]) throws(KeyError) {
        for key in table.keys.sorted() where !allowed.contains(key) {
            throw KeyError(key: keyPath(key), reason: "unknown key; known keys here: \(allowed.joined(separator: ", "))")
        }
    }

    private func value(_ key: String, _ expected: TOMLType, _ typeName: String) throws(KeyError) -> TOMLValueConvertible? {
        guard let value = table[key] else { return nil }
        guard value.type == expected else {
            throw KeyError(key: keyPath(key), reason: "wrong type: expected \(typeName), found \(value.type)")
        }
        return value
    }

    func string(_ key: String) throws(KeyError) -> String? {
        try value(key, .string, "a string")?.string
    }

    func string(_ key: String, default fallback: String) throws(KeyError) -> String {
        try string(key) ?? fallback
    }

    /// A string that must be present; `reason` says what is missing.
    func requiredString(_ key: String, reason: String = "missing") throws(KeyError) -> String {
        guard let text = try string(key) else { throw KeyError(key: keyPath(key), reason: reason) }
        return text
    }

    func int(_ key: String, default fallback: Int, range: ClosedRange<Int>) throws(KeyError) -> Int {
        guard let int = try value(key, .int, "an integer")?.int else { return fallback }
        guard range.contains(int) else {
            throw KeyError(key: keyPath(key), reason: "\(int) is out of range \(range.lowerBound)…\(range.upperBound)")
        }
        return int
    }

    func bool(_ key: String, default fallback: Bool) throws(KeyError) -> Bool {
        try value(key, .bool, "true or false")?.bool ?? fallback
    }

    func duration(
        _ key: String, default fallback: Duration, minimum: Duration = .zero, maximum: Duration? = nil
    ) throws(KeyError) -> Duration {
        guard let text = try string(key) else { return fallback }
        guard let duration = DurationText.parse(text) else {
            throw KeyError(key: keyPath(key), reason: "bad duration \"\(text)\": expected \(DurationText.expected)")
        }
        guard duration >= minimum else {
            throw KeyError(key: keyPath(key), reason: "must be at least \(DurationText.format(minimum))")
        }
        if let maximum, duration > maximum {
            throw KeyError(key: keyPath(key), reason: "must be at most \(DurationText.format(maximum))")
        }
        return duration
    }

    func stringArray(_ key: String) throws(KeyError) -> [String]? {
        guard let array = try value(key, .array, "an array of strings")?.array else { return nil }
        var result: [String] = []
        for (i, element) in array.enumerated() {
            guard element.type == .string, let text = element.string else {
                throw KeyError(key: "\(keyPath(key))[\(i)]", reason: "wrong type: expected a string, found \(element.type)")
            }
            result.append(text)
        }
        return result
    }

    func section(_ key: String) throws(KeyError) -> TOMLSection? {
        guard let table = try value(key, .table, "a table")?.table else { return nil }
        return TOMLSection(table, path: keyPath(key))
    }

    /// An array of tables (`[[key]]`), each as a section named `key[i]`.
    func sections(_ key: String) throws(KeyError) -> [TOMLSection] {
        guard let array = try value(key, .array, "an array of tables ([[\(key)]])")?.array else { return [] }
        var result: [TOMLSection] = []
        for (i, element) in array.enumerated() {
            guard element.type == .table, let table = element.table else {
                throw KeyError(key: "\(keyPath(key))[\(i)]", reason: "wrong type: expected a table, found \(element.type)")
            }
            result.append(TOMLSection(table, path: "\(keyPath(key))[\(i)]"))
        }
        return result
    }
}
