import DallyCore

/// How objects are cut into chunks: the method and the chunk sizes it aims for.
///
/// Chunk boundaries decide what deduplicates: an edit to an object re-sends only the chunks it
/// touches, as long as the chunks around it are cut where they were before. That is why the
/// default is content-defined (FastCDC): an insert or a delete moves every later offset, which
/// re-cuts every later chunk of a fixed-size chunker but only the chunks near the edit of a
/// content-defined one.
///
/// Changing the parameters of a running deployment is safe but costly: objects chunked before
/// and after share few chunks, so their first edit after the change is sent nearly whole.
public struct ChunkingParameters: Sendable, Hashable {
    /// How boundaries are found.
    public enum Method: String, Sendable, CaseIterable {
        /// Gear-hash content-defined chunking with normalized chunking (Xia et al., 2016).
        case fastCDC = "fastcdc"
        /// Chunks of exactly `average` bytes (the last one shorter): the baseline to measure
        /// against, and cheap when objects are only ever replaced whole or appended to.
        case fixed
    }

    public var method: Method
    /// FastCDC: no chunk but the last is shorter. Ignored by `fixed`.
    public var minimum: Int
    /// FastCDC: the size the cut condition aims for (rounded to a power of two for the mask);
    /// `fixed`: the size of every chunk but the last.
    public var average: Int
    /// FastCDC: a chunk is cut here if no content boundary came first; bounds the chunker's
    /// buffer and each chunk held in memory. Ignored by `fixed`.
    public var maximum: Int

    public init(method: Method, minimum: Int, average: Int, maximum: Int) {
        self.method = method
        self.minimum = minimum
        self.average = average
        self.maximum = maximum
    }

    /// FastCDC aiming at `average`, with minimum `average / 4` and maximum `average * 4`: the
    /// spread the FastCDC paper evaluates.
    public static func fastCDC(average: Int) -> ChunkingParameters {
        ChunkingParameters(method: .fastCDC, minimum: average / 4, average: average, maximum: average * 4)
    }

    /// Chunks of exactly `size` bytes.
    public static func fixed(size: Int) -> ChunkingParameters {
        ChunkingParameters(method: .fixed, minimum: size, average: size, maximum: size)
    }

    /// What objects are chunked with unless configured otherwise: FastCDC aiming at 256 KiB
    /// (minimum 64 KiB, maximum 1 MiB), chosen with `dally-bench chunking` (figures in
    /// docs/OBJECTS.md, "Chunking (measured)").
    ///
    /// - Content-defined rather than fixed: a 1 MB insert or delete in a 100 MB object sends
    ///   0.5–1.8 MB instead of ~50 MB (everything after the edit), and a trace of 20 mixed edits
    ///   sends 28 MB instead of 463 MB.
    /// - 256 KiB rather than 1 MiB: a 1 MB edit sends 0.5–1.8 MB of chunks rather than 3.4–5.6 MB,
    ///   and the edit trace 28 MB rather than 88 MB.
    /// - 256 KiB rather than 64 KiB: 64 KiB sends fewer chunk bytes per 1 MB edit (0.8 MB rather
    ///   than 1.3 MB) and far fewer for scattered tiny edits, but costs 4× the chunks: a 2 GiB
    ///   object has ~26,000 rather than ~6,600, so 4× the requests on its first upload and a 2 MB
    ///   rather than 0.5 MB JSON manifest, sent again whole after every edit (and every hash is
    ///   listed again in the missing-chunks ask). Counting the manifest alone, 256 KiB sends less
    ///   per 1 MB edit from objects of ~700 MB up (1.8 MB rather than 2.8 MB at 2 GiB), and it
    ///   needs 4× fewer requests at every size.
    /// - Speed does not decide it: every FastCDC size scans at ~2.6 GB/s and chunks and hashes at
    ///   ~1 GB/s. A 1 MiB largest chunk also keeps each chunk held in memory small.
    public static let `default` = ChunkingParameters.fastCDC(average: 256 << 10)

    /// The largest chunk a chunker may make: what a manifest accepts.
    public static let largestChunk = ObjectManifest.maxChunkBytes

    /// Checks the sizes, for parameters read from a configuration.
    ///
    /// - Throws: ``DallyError`` `bad_request` naming the size that is out of range: sizes must
    ///   satisfy 1 ≤ minimum ≤ average ≤ maximum ≤ ``largestChunk`` (for `fixed`, only
    ///   1 ≤ average ≤ ``largestChunk``).
    public func validate() throws(DallyError) {
        guard average >= 1, average <= Self.largestChunk else {
            throw DallyError(.badRequest, "the average chunk size must be 1…\(Self.largestChunk) bytes, got \(average)", field: "average")
        }
        guard method == .fastCDC else { return }
        guard minimum >= 1, minimum <= average else {
            throw DallyError(.badRequest, "the minimum chunk size must be 1…average (\(average)) bytes, got \(minimum)", field: "minimum")
        }
        guard maximum >= average, maximum <= Self.largestChunk else {
            throw DallyError(
                .badRequest, "the maximum chunk size must be average (\(average))…\(Self.largestChunk) bytes, got \(maximum)",
                field: "maximum")
        }
    }

    /// The sizes forced into range (see ``validate()``), so that a chunker never fails on
    /// parameters that were not validated: maximum into 1…largestChunk, average into
    /// 1…maximum, minimum into 1…average.
    var clamped: ChunkingParameters {
        var out = self
        if method == .fixed {
            out.average = min(max(average, 1), Self.largestChunk)
            out.minimum = out.average
            out.maximum = out.average
            return out
        }
        out.maximum = min(max(maximum, 1), Self.largestChunk)
        out.average = min(max(average, 1), out.maximum)
        out.minimum = min(max(minimum, 1), out.average)
        return out
    }
}
