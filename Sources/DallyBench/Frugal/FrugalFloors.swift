import ArgumentParser
import DallyFrugal
import Foundation

/// The floors the benchmark compares with.
struct FrugalFloors {
    let wakeUps: Int
    /// The final rows' text and its zstd -19 frame.
    let rawBytes: Int
    let zstd19Bytes: Int
    /// The final rows' distinct objects, at their size (incompressible).
    let objectBytes: Int
    /// The row states the deadlines oblige a sender to move (see ``ObligedDataFloor``), and
    /// every object stored.
    let obliged: (states: Int, raw: Int, compressed: Int)
    let obligedObjectBytes: Int

    /// What the cloud must end with: the rows' zstd -19 frame and the objects.
    var finalBytes: Int { zstd19Bytes + objectBytes }
    var obligedBytes: Int { obliged.compressed + obligedObjectBytes }

    init(trace: FrugalTrace, allClassesUp: Bool) throws {
        wakeUps = WakeFloor.minimumWakeUps(trace: trace, allClassesUp: allClassesUp)
        let finalRows = trace.finalRows()
        let sizes = try FinalDataFloor.zstd19Bytes(of: finalRows, tables: trace.tables, epochMillis: FrugalTrace.epochMillis)
        (rawBytes, zstd19Bytes) = (sizes.raw, sizes.compressed)
        objectBytes = FinalDataFloor.objectBytes(of: finalRows)
        obliged = try ObligedDataFloor.zstd19Bytes(trace: trace)
        obligedObjectBytes = ObligedDataFloor.objectBytes(trace: trace)
    }
}
