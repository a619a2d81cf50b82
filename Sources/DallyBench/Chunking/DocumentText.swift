import DallyCore
import ArgumentParser
import DallyObjects
import Foundation

/// Document-like text: lines of words drawn with a skew from a fixed vocabulary, numbered
/// headings, and boilerplate paragraphs that recur, so that it compresses like prose.
struct DocumentText {
    private let words: [[UInt8]]
    private let boilerplate: [[UInt8]]
    private var heading = 0

    init(random: inout SplitMix64) {
        let letters = Array("etaoinshrdlucmfwypvbgkjqxz".utf8)
        words = (0..<4000).map { _ in
            (0..<random.int(2...10)).map { _ in letters[min(letters.count - 1, Int(pow(random.unit(), 2) * Double(letters.count)))] }
        }
        var paragraphs: [[UInt8]] = []
        for _ in 0..<20 {
            var paragraph: [UInt8] = []
            for _ in 0..<random.int(40...200) { paragraph += words[random.int(0...words.count - 1)] + [32] }
            paragraphs.append(paragraph + [10, 10])
        }
        boilerplate = paragraphs
    }

    mutating func append(_ count: Int, to out: inout [UInt8], random: inout SplitMix64) {
        let end = out.count + count
        while out.count < end {
            switch random.int(0...19) {
            case 0:
                heading += 1
                out += Array("\n## Section \(heading)\n\n".utf8)
            case 1:
                out += boilerplate[random.int(0...boilerplate.count - 1)]
            default:
                for _ in 0..<random.int(5...15) {
                    out += words[min(words.count - 1, Int(pow(random.unit(), 3) * Double(words.count)))]
                    out.append(32)
                }
                out.append(10)
            }
        }
        out.removeLast(out.count - end)
    }
}
