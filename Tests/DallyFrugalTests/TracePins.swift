import DallyCore
import DallyFrugal

/// Figures of the seed-1 trace, measured once and pinned: a change to the generator that moves
/// any of them changes the benchmark's workload, and should be made on purpose.
enum TracePins {
    static let seed1Fingerprint: UInt64 = 10_380_528_020_588_855_445
    static let seed1WritesPerTable = ["telemetry": 17_997, "status": 35_996, "orders": 1_726, "photos": 231]
    static let finalRaw = 1_181_801
    /// zstd's output can move a little between libzstd releases; the size is checked within 2%.
    static let finalZstd19 = 164_418
    static let minimumWakeUpsAllUp = 58
    static let minimumWakeUpsPartial = 61

    /// The fingerprint the seed-1 trace had before photos had images (an OBJECT column, null in
    /// `values`, and an object per photo): with ``fingerprint(_:withObjects:)`` `false` the trace
    /// must still give it, so the images moved nothing else.
    static let seed1FingerprintBeforeObjects: UInt64 = 18_421_715_909_651_671_824
    /// The seed-1 trace's photo objects: how many, and their bytes.
    static let seed1Objects = 200
    static let seed1ObjectBytes = 108_411_818

    /// FNV-1a over every write (its object's size and seed too) and the wifi pattern, as text.
    /// With `withObjects` false, objects and the OBJECT column's value are left out, which is
    /// the fingerprint as it was before the trace had objects.
    static func fingerprint(_ trace: FrugalTrace, withObjects: Bool = true) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        func add(_ text: String) {
            for byte in text.utf8 {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01B3
            }
        }
        for write in trace.writes {
            add("\(write.at) \(write.client) \(write.table) \(write.id) \(write.deleted) ")
            var values = write.values
            if !withObjects, let column = trace.table(write.table)?.objectColumn, column < values.count {
                values.remove(at: column)
            }
            add(JSONValue.array(values).jsonText)
            if withObjects, let object = write.object { add(" object \(object.size) \(object.seed)") }
            add("\n")
        }
        for window in trace.wifiUp { add("\(window.lowerBound)..<\(window.upperBound)\n") }
        return hash
    }
}
