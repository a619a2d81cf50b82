import DallyCore
import DallyFrugal

/// Figures of the seed-1 trace, measured once and pinned: a change to the generator that moves
/// any of them changes the benchmark's workload, and should be made on purpose.
enum TracePins {
    static let seed1Fingerprint: UInt64 = 18_421_715_909_651_671_824
    static let seed1WritesPerTable = ["telemetry": 17_997, "status": 35_996, "orders": 1_726, "photos": 231]
    static let finalRaw = 1_163_759
    /// zstd's output can move a little between libzstd releases; the size is checked within 2%.
    static let finalZstd19 = 156_178
    static let minimumWakeUpsAllUp = 58
    static let minimumWakeUpsPartial = 61

    /// FNV-1a over every write and the wifi pattern, as text.
    static func fingerprint(_ trace: FrugalTrace) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        func add(_ text: String) {
            for byte in text.utf8 {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01B3
            }
        }
        for write in trace.writes {
            add("\(write.at) \(write.client) \(write.table) \(write.id) \(write.deleted) ")
            add(JSONValue.array(write.values).jsonText)
            add("\n")
        }
        for window in trace.wifiUp { add("\(window.lowerBound)..<\(window.upperBound)\n") }
        return hash
    }
}
