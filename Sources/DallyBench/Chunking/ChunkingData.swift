import DallyCore
import ArgumentParser
import DallyObjects
import Foundation

/// The benchmark's object and its edits, all from one seeded generator.
enum ChunkingData {
    /// A change to an object, kept as the change rather than the edited copy so that a trace of
    /// many edits holds one version in memory at a time.
    struct Edit {
        enum Change {
            case overwrite(at: Int, [UInt8])
            case insert(at: Int, [UInt8])
            case delete(at: Int, count: Int)
            case bump(at: [Int])
            case append([UInt8])
        }

        let name: String
        let change: Change

        /// One of the three 1 MB edits (overwrite, insert, delete).
        var isOneMB: Bool {
            switch change {
            case .overwrite(_, let new), .insert(_, let new): new.count == 1_000_000
            case .delete(_, let count): count == 1_000_000
            case .bump, .append: false
            }
        }

        func apply(to bytes: inout [UInt8]) {
            switch change {
            case .overwrite(let at, let new): bytes.replaceSubrange(at..<at + new.count, with: new)
            case .insert(let at, let new): bytes.insert(contentsOf: new, at: at)
            case .delete(let at, let count): bytes.removeSubrange(at..<at + count)
            case .bump(let positions): for at in positions { bytes[at] &+= 1 }
            case .append(let new): bytes += new
            }
        }
    }

    /// `bytes` bytes: stretches of 1–8 MiB, alternately random (incompressible) and text.
    static func object(bytes: Int, random: inout SplitMix64) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(bytes + (8 << 20))
        var text = DocumentText(random: &random)
        var isText = false
        while out.count < bytes {
            let stretch = min(bytes - out.count, random.int(1 << 20...8 << 20))
            if isText { text.append(stretch, to: &out, random: &random) } else { out += random.bytes(stretch) }
            isText.toggle()
        }
        return out
    }

    /// One edit each, in the middle: 1 MB overwritten, inserted, deleted; 100 scattered 1-byte changes.
    static func singleEdits(of original: [UInt8], random: inout SplitMix64) -> [Edit] {
        let middle = original.count / 2
        let mb = 1_000_000
        return [
            Edit(name: "overwrite 1MB", change: .overwrite(at: middle, random.bytes(mb))),
            Edit(name: "insert 1MB", change: .insert(at: middle, random.bytes(mb))),
            Edit(name: "delete 1MB", change: .delete(at: middle, count: mb)),
            Edit(name: "100×1B", change: .bump(at: (0..<100).map { _ in random.int(0...original.count - 1) })),
        ]
    }

    /// `count` successive edits, each on the version before, cycling through overwrites, inserts
    /// and deletes of 1 B–1 MB anywhere, bursts of ten 1-byte changes, and appends.
    static func trace(of original: [UInt8], edits count: Int, random: inout SplitMix64) -> [Edit] {
        var edits: [Edit] = []
        var size = original.count
        for i in 0..<count {
            let length = random.int(1...1_000_000)
            let at = random.int(0...size - length - 1)
            switch i % 5 {
            case 0: edits.append(Edit(name: "overwrite", change: .overwrite(at: at, random.bytes(length))))
            case 1:
                edits.append(Edit(name: "insert", change: .insert(at: at, random.bytes(length))))
                size += length
            case 2:
                edits.append(Edit(name: "delete", change: .delete(at: at, count: length)))
                size -= length
            case 3: edits.append(Edit(name: "bump", change: .bump(at: (0..<10).map { _ in random.int(0...size - 1) })))
            default:
                edits.append(Edit(name: "append", change: .append(random.bytes(length))))
                size += length
            }
        }
        return edits
    }
}
