import DallyCompression
import DallyCore
import DallySync
import Foundation

/// A batch document and where its pieces are: envelope, sections, the separators and closing.
struct CodecBatch {
    let json: [UInt8]
    /// (table, range of the section in `json`), in order.
    let sections: [(CodecTable, Range<Int>)]
    var sectionCount: Int { sections.count }

    /// The pieces to compress: the envelope and separators without a dictionary, each section
    /// with its table's.
    func segments(_ dictionaries: [CodecTable: ZstdDictionary?]) -> [FramedZstd.Segment] {
        var segments: [FramedZstd.Segment] = []
        var end = 0
        for (table, range) in sections {
            segments.append(.init(json[end..<range.lowerBound]))
            segments.append(.init(json[range], dictionary: dictionaries[table] ?? nil))
            end = range.upperBound
        }
        segments.append(.init(json[end...]))
        return segments
    }
}
