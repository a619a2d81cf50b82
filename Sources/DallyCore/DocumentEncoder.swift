import Foundation

/// How every JSON document Dally answers with (stats, answers, errors) is encoded from its
/// `Encodable` type: compact, members sorted by name so that the same document always reads
/// the same (Foundation's encoder does not keep the order members were written in), and `/`
/// left unescaped so that URLs read as they are.
///
/// Rows and the sync wire format are not documents: they go through ``JSONWriter``.
///
/// ```swift
/// let bytes = try DocumentEncoder.encode(["status": "ok"])   // {"status":"ok"}
/// ```
public enum DocumentEncoder {
    public static func encode(_ document: some Encodable) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(document))
    }
}
