import DallyCompression
import DallyCore
import DallySync
import Foundation

/// Row counts measured, and how many sections of each (fewer of the larger ones).
enum CodecRowCounts {
    static let measured = [1, 10, 100, 1000]
    static func sectionsMeasured(rows: Int) -> Int { max(4, 200 / rows) }
}
