/// Byte counts in words, for messages a person reads: `4 MiB`, `1.5 GiB`, `700 bytes`.
///
/// ```swift
/// ByteCount.words(4_194_304)   // "4 MiB"
/// ByteCount.words(1_572_864)   // "1.5 MiB"
/// ```
public enum ByteCount {
    public static func words(_ bytes: Int) -> String {
        let units = ["KiB", "MiB", "GiB", "TiB"]
        guard bytes >= 1024 else { return bytes == 1 ? "1 byte" : "\(bytes) bytes" }
        var value = Double(bytes)
        var unit = "bytes"
        for next in units where value >= 1024 {
            value /= 1024
            unit = next
        }
        let tenths = (value * 10).rounded() / 10
        let text = tenths == tenths.rounded() ? String(Int(tenths)) : String(tenths)
        return "\(text) \(unit)"
    }
}
