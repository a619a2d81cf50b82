/// Syntax rules for the names that come from outside: table names, column names and row ids.
///
/// Table and column names reach SQL only after they are checked here *and* found in the
/// configured schema; row ids are always bound parameters, but are still restricted to a
/// safe alphabet so that they can appear in URLs, logs and file names without escaping.
public enum Identifier {
    /// The longest row id accepted.
    public static let maxRowIDLength = 128
    /// The longest table or column name accepted.
    public static let maxNameLength = 63

    /// Names that a column may not take because the replica uses them for row metadata.
    public static let reservedColumnNames: Set<String> = [
        "id", "seq", "updated_at", "deleted", "version", "conflict", "values", "expected_seq",
    ]

    /// Whether `name` is a valid table or column name: an ASCII letter or underscore, then up
    /// to 62 ASCII letters, digits or underscores.
    public static func isValidName(_ name: String) -> Bool {
        let bytes = name.utf8
        guard let first = bytes.first, bytes.count <= maxNameLength else { return false }
        guard isLetter(first) || first == UInt8(ascii: "_") else { return false }
        return bytes.allSatisfy { isLetter($0) || isDigit($0) || $0 == UInt8(ascii: "_") }
    }

    /// Whether `id` is a valid row id: 1 to 128 characters from `A–Z a–z 0–9 - _ . : ~`, and
    /// not `.` or `..`, which URL clients and file systems resolve as paths.
    ///
    /// UUIDs, ULIDs, ObjectIds and most human-chosen keys fit; slashes, spaces, quotes and
    /// percent signs do not.
    public static func isValidRowID(_ id: String) -> Bool {
        let bytes = id.utf8
        guard !bytes.isEmpty, bytes.count <= maxRowIDLength, id != ".", id != ".." else { return false }
        return bytes.allSatisfy { byte in
            isLetter(byte) || isDigit(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "~")
        }
    }

    @inline(__always) private static func isLetter(_ b: UInt8) -> Bool {
        (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")) || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z"))
    }

    @inline(__always) private static func isDigit(_ b: UInt8) -> Bool {
        b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")
    }
}
