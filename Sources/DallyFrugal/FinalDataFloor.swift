import DallyTestSupport
import DallyCompression
import DallyCore

/// The byte floor: the data the cloud ends with, written once and compressed as hard as zstd
/// goes within a server's memory (level 19). No sync protocol can move the final state in much
/// fewer bytes than this without knowing the data in advance, so the benchmark's wire bytes
/// are reported as a multiple of it.
///
/// The serialization is canonical, so the figure depends on the data alone:
///
/// - tables in name order; for each, a header line, the compact JSON object
///   `{"table":"orders","columns":["customer TEXT","total REAL",…]}`;
/// - then its rows sorted by id (byte order of the UTF-8), one compact JSON array per line:
///   `[id, updated_at_ms, deleted, value…]` — the values in column order for a live row,
///   none for a tombstone (which the cloud keeps, so it is part of the state to move);
/// - `updated_at_ms` is `epochMillis + write.at`, wall-clock milliseconds as the cloud stores
///   them (by default with ``FrugalTrace/epochMillis`` as the trace's zero);
/// - every line ends with `\n`; doubles as `JSONWriter` writes them (shortest round-trip form);
/// - an `OBJECT` column holding an object is `{"hash":"<64 hex>","size":n}`, where the 64 hex
///   digits stand in for the object's SHA-256: the hex of the object's first 32 bytes, exactly
///   as long and as incompressible, and known without hashing the object.
///
/// The whole text is one zstd frame. The objects' bytes are not in it: they are incompressible
/// (zstd -19 would only add its framing), so the floor counts them at their size, each distinct
/// object once (``objectBytes(of:)``).
public enum FinalDataFloor {
    /// The canonical text of `rows` (as ``FrugalTrace/finalRows()`` gives them) for `tables`.
    /// Rows of tables not in `tables` are left out; a table without rows is a header alone.
    public static func serialize(
        _ rows: [String: [String: TraceWrite]], tables: [TraceTable], epochMillis: Int64 = FrugalTrace.epochMillis
    ) -> [UInt8] {
        var writer = JSONWriter(capacity: 1 << 20)
        for table in tables.sorted(by: { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }) {
            writer.raw("{\"table\":")
            writer.string(table.name)
            writer.raw(",\"columns\":[")
            for (i, column) in table.columns.enumerated() {
                if i > 0 { writer.raw(",") }
                writer.string(column)
            }
            writer.raw("]}\n")
            let tableRows = (rows[table.name] ?? [:]).values.sorted {
                $0.id.utf8.lexicographicallyPrecedes($1.id.utf8)
            }
            let objectColumn = table.objectColumn
            for row in tableRows {
                writer.raw("[")
                writer.string(row.id)
                writer.raw(",")
                writer.int(epochMillis + row.at)
                writer.raw(",")
                writer.bool(row.deleted)
                if !row.deleted {
                    for (index, value) in row.values.enumerated() {
                        writer.raw(",")
                        if index == objectColumn, let object = row.object {
                            writer.raw("{\"hash\":")
                            writer.string(standInHash(object))
                            writer.raw(",\"size\":")
                            writer.int(Int64(object.size))
                            writer.raw("}")
                        } else {
                            writer.value(value)
                        }
                    }
                }
                writer.raw("]\n")
            }
        }
        return writer.bytes
    }

    /// 64 hex digits as incompressible as a SHA-256: the object's first 32 bytes (fewer for a
    /// smaller object, padded with its seed's bytes).
    static func standInHash(_ object: TraceObject) -> String {
        let head = object.synthetic.bytes(at: 0, count: min(32, object.size))
        let bytes = head + SyntheticObject.seeded(at: 0, count: 32 - head.count, seed: object.seed ^ 0xFFFF)
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self)
    }

    /// The bytes of the distinct objects that live rows of `rows` hold: what the cloud must end
    /// with besides the rows.
    public static func objectBytes(of rows: [String: [String: TraceWrite]]) -> Int {
        let objects = Set(rows.values.flatMap(\.values).compactMap { $0.deleted ? nil : $0.object })
        return objects.reduce(0) { $0 + $1.size }
    }

    /// The size of the canonical text and of its zstd level-19 frame.
    ///
    /// - Throws: `CompressionError` only if libzstd itself fails.
    public static func zstd19Bytes(
        of rows: [String: [String: TraceWrite]], tables: [TraceTable], epochMillis: Int64 = FrugalTrace.epochMillis
    ) throws(CompressionError) -> (raw: Int, compressed: Int) {
        let text = serialize(rows, tables: tables, epochMillis: epochMillis)
        let frame = try Compressor.compress(text, coding: .zstd, level: 19)
        return (text.count, frame.count)
    }
}
