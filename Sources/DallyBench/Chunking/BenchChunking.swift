import DallyCore
import ArgumentParser
import DallyObjects
import Foundation

/// `dally-bench chunking`: what each way of cutting objects into chunks costs and saves, to choose
/// ``ChunkingParameters/default`` by measurement.
///
/// One seeded object (`--mb` MB: alternating stretches of random bytes and of document-like
/// text) is chunked with fixed-size and FastCDC chunking at three sizes, then edited: 1 MB
/// overwritten, inserted or deleted in the middle, and 100 scattered 1-byte changes, each on its
/// own; then a trace of 20 successive mixed edits. For every edit, "new" chunks are those whose
/// hash the store does not hold yet: what an upload would send, one request each. Throughput is
/// the chunker fed 64 KiB pieces (as an upload reads them), with and without SHA-256.
///
/// Every figure but the speeds is fixed by the seed. Build with `swift build -c release` first.
struct BenchChunking: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chunking",
        abstract: "Measure chunking: dedup after edits, chunk counts, manifest sizes, throughput."
    )

    @Option(name: .long, help: "Object size in MB (10^6 bytes).")
    var mb = 100

    @Option(name: .long, help: "Successive edits in the edit trace.")
    var edits = 20

    func validate() throws {
        guard mb >= 8 else { throw ValidationError("--mb: at least 8") }
        guard edits >= 1 else { throw ValidationError("--edits: at least 1") }
    }

    static let configurations: [ChunkingParameters] = [64 << 10, 256 << 10, 1 << 20].flatMap {
        [ChunkingParameters.fixed(size: $0), .fastCDC(average: $0)]
    }
    static let mega = 1_000_000.0
    /// Bytes per chunk of a manifest: in a store (hash and size) and in JSON (`["<64 hex>",size],`).
    static let storageBytesPerChunk = 36.0
    static let jsonBytesPerChunk = 75.0

    func run() throws {
        var random = SplitMix64(seed: 0xC4C)
        let original = ChunkingData.object(bytes: mb * 1_000_000, random: &random)
        let edits = ChunkingData.singleEdits(of: original, random: &random)
        let trace = ChunkingData.trace(of: original, edits: self.edits, random: &random)
        print("""
            object: \(mb) MB of seeded data, alternating random and document-like stretches of 1–8 MiB
            new = chunks whose SHA-256 the store lacks after the edit (one PUT each); ratio = object bytes / new bytes
            manifest for a 2 GiB object = chunks × 36 B stored, × ~75 B as JSON
            """)

        var rows = [["chunking", "chunks", "mean KiB", "2GiB: chunks", "stored KB", "JSON KB", "scan MB/s", "+SHA MB/s"]]
        var editRows = [["chunking"] + edits.map(\.name).flatMap { ["\($0): new", "MB", "ratio"] }]
        var traceRows = [["chunking", "versions", "naive MB", "new chunks", "new MB", "ratio", "+manifests MB", "ratio"]]
        var costRows = [["chunking", "1MB edit: PUTs", "chunk MB", "manifest MB", "total MB", "first upload: PUTs"]]
        for parameters in Self.configurations {
            let name = Self.name(parameters)
            let scan = parameters.method == .fixed ? "—" : "\(Int(Self.scanSpeed(original, parameters).rounded()))"
            let start = ContinuousClock.now
            let chunks = Self.chunks(original, parameters)
            let hashSpeed = Double(original.count) / Self.mega / (ContinuousClock.now - start).benchSeconds
            let mean = Double(original.count) / Double(chunks.count)
            let chunks2GiB = Double(2 << 30) / mean
            rows.append([
                name, "\(chunks.count)", BenchOutput.figure(mean / 1024), "\(Int(chunks2GiB.rounded()))",
                BenchOutput.figure(chunks2GiB * Self.storageBytesPerChunk / 1000),
                BenchOutput.figure(chunks2GiB * Self.jsonBytesPerChunk / 1000),
                scan, "\(Int(hashSpeed.rounded()))",
            ])

            let stored = Set(chunks.map(\.hash))
            var editRow = [name]
            var oneMB: [(count: Int, bytes: Int)] = []
            for edit in edits {
                var edited = original
                edit.apply(to: &edited)
                let sent = Self.newChunks(Self.chunks(edited, parameters), stored: stored)
                if edit.isOneMB { oneMB.append(sent) }
                editRow += [
                    "\(sent.count)", BenchOutput.figure(Double(sent.bytes) / Self.mega),
                    BenchOutput.figure(Double(edited.count) / Double(max(sent.bytes, 1))),
                ]
            }
            editRows.append(editRow)
            let putsPerEdit = Double(oneMB.map(\.count).reduce(0, +)) / Double(oneMB.count)
            let chunkMBPerEdit = Double(oneMB.map(\.bytes).reduce(0, +)) / Double(oneMB.count) / Self.mega
            let manifestMB = chunks2GiB * Self.jsonBytesPerChunk / Self.mega
            if parameters.method == .fastCDC {
                costRows.append([
                    name, BenchOutput.figure(putsPerEdit), BenchOutput.figure(chunkMBPerEdit), BenchOutput.figure(manifestMB),
                    BenchOutput.figure(chunkMBPerEdit + manifestMB), "\(Int(chunks2GiB.rounded()))",
                ])
            }

            var store = stored
            var naive = 0
            var newCount = 0
            var newBytes = 0
            var manifestBytes = 0.0
            var version = original
            for edit in trace {
                edit.apply(to: &version)
                let versionChunks = Self.chunks(version, parameters)
                let sent = Self.newChunks(versionChunks, adding: &store)
                manifestBytes += Double(versionChunks.count) * Self.jsonBytesPerChunk
                naive += version.count
                newCount += sent.count
                newBytes += sent.bytes
            }
            traceRows.append([
                name, "\(trace.count)", BenchOutput.figure(Double(naive) / Self.mega), "\(newCount)",
                BenchOutput.figure(Double(newBytes) / Self.mega), BenchOutput.figure(Double(naive) / Double(max(newBytes, 1))),
                BenchOutput.figure((Double(newBytes) + manifestBytes) / Self.mega),
                BenchOutput.figure(Double(naive) / (Double(newBytes) + manifestBytes)),
            ])
        }
        print("\nchunks of the original object, and throughput (release; chunker fed 64 KiB pieces; fixed has no scan)")
        BenchOutput.table(rows)
        print("\nsingle edits in the middle of the object: new chunks, new MB, dedup ratio")
        BenchOutput.table(editRows)
        print("\nedit trace: \(trace.count) successive mixed edits; new = not in any earlier version; naive = every version re-uploaded whole; +manifests = with each version's JSON manifest")
        BenchOutput.table(traceRows)
        print("""

            a 1 MB edit to a 2 GiB object (mean of the overwrite, insert and delete above, plus the new JSON manifest), and its \
            first upload; FastCDC only: with fixed sizes an insert or delete re-sends everything after it
            """)
        BenchOutput.table(costRows)
    }

    static func name(_ parameters: ChunkingParameters) -> String {
        func size(_ bytes: Int) -> String { bytes >= 1 << 20 ? "\(bytes >> 20)M" : "\(bytes >> 10)K" }
        switch parameters.method {
        case .fixed: return "fixed \(size(parameters.average))"
        case .fastCDC: return "fastcdc \(size(parameters.minimum))/\(size(parameters.average))/\(size(parameters.maximum))"
        }
    }

    /// Each chunk's hash and size, the chunker fed 64 KiB pieces.
    static func chunks(_ bytes: [UInt8], _ parameters: ChunkingParameters) -> [(hash: ContentHash, size: Int)] {
        var chunker = StreamingChunker(parameters)
        var out: [(hash: ContentHash, size: Int)] = []
        let emit: (UnsafeRawBufferPointer) -> Void = { out.append((ContentHash.of($0), $0.count)) }
        bytes.withUnsafeBytes { all in
            var offset = 0
            while offset < all.count {
                let end = min(all.count, offset + 65_536)
                chunker.append(UnsafeRawBufferPointer(rebasing: all[offset..<end]), emit: emit)
                offset = end
            }
        }
        chunker.finish(emit: emit)
        return out
    }

    /// MB/s of the boundary scan alone (best of three), the chunker fed 64 KiB pieces.
    static func scanSpeed(_ bytes: [UInt8], _ parameters: ChunkingParameters) -> Double {
        var best = Duration.seconds(1_000_000)
        for _ in 0..<3 {
            var chunker = StreamingChunker(parameters)
            var count = 0
            let start = ContinuousClock.now
            bytes.withUnsafeBytes { all in
                var offset = 0
                while offset < all.count {
                    let end = min(all.count, offset + 65_536)
                    chunker.append(UnsafeRawBufferPointer(rebasing: all[offset..<end])) { _ in count += 1 }
                    offset = end
                }
            }
            chunker.finish { _ in count += 1 }
            best = min(best, ContinuousClock.now - start)
            precondition(count > 0)
        }
        return Double(bytes.count) / mega / best.benchSeconds
    }

    /// The chunks of `chunks` that `stored` lacks, each counted once.
    static func newChunks(_ chunks: [(hash: ContentHash, size: Int)], stored: Set<ContentHash>) -> (count: Int, bytes: Int) {
        var store = stored
        return newChunks(chunks, adding: &store)
    }

    /// The chunks of `chunks` that `store` lacks, each counted once; adds them to `store`.
    static func newChunks(_ chunks: [(hash: ContentHash, size: Int)], adding store: inout Set<ContentHash>) -> (count: Int, bytes: Int) {
        var count = 0
        var bytes = 0
        for chunk in chunks where store.insert(chunk.hash).inserted {
            count += 1
            bytes += chunk.size
        }
        return (count, bytes)
    }
}
