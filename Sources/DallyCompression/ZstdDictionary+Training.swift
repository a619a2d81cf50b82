import CZstd

extension ZstdDictionary {
    /// How ``train(samples:capacity:id:level:method:)`` picks the dictionary's content. Every
    /// method then computes the entropy tables for the requested level from the samples and
    /// writes the requested id, and runs on the calling thread only (no thread pool), so the
    /// same samples give the same bytes.
    public enum TrainingMethod: String, Sendable, CaseIterable {
        /// `ZDICT_trainFromBuffer`: fastCover with d = 8, trying 4 segment sizes and keeping the
        /// one that compresses the last quarter of the samples best. The default: within 1.5%
        /// of COVER's ratio at every size `dally-bench codec` measures (1 to 16 KiB), 60 to 85
        /// times faster, better than legacy on 1-row sections, and the only method in
        /// libzstd's stable API.
        case fastCover
        /// COVER (Liao, Petri, Moffat, Wirth), trying d = 6 and 8 and 40 segment sizes: the
        /// slowest, and the best ratio for the smallest dictionaries. Uses libzstd's
        /// experimental API (`ZDICT_STATIC_LINKING_ONLY`), whose parameter structs may change
        /// between libzstd versions: Dally is compiled against the installed headers.
        case cover
        /// zstd's original suffix-array trainer (`ZDICT_trainFromBuffer_legacy`). Experimental
        /// API, like ``cover``.
        case legacy
    }

    /// The capacity to train with when nothing else is configured: 4 KiB.
    ///
    /// Measured by `dally-bench codec` on sections of three tables of 5 to 6 columns: 2 and
    /// 4 KiB are within 1% of each other at every level and section size; 8 and 16 KiB do worse
    /// on 1-row sections at levels 6 and 9 (up to 11%), 1 KiB does at level 3 (3%). 4 KiB
    /// leaves room for wider tables than these, and costs little to send.
    public static let defaultCapacity = 4096

    /// How many bytes of recent sections to train a table's dictionary on when nothing else is
    /// configured: 256 KiB, 64 times ``defaultCapacity``.
    ///
    /// Measured by `dally-bench codec`: 25 sections (56 KB a table) already come within 1% of
    /// the ratio of 800 (2 MB a table), while training time grows with the bytes (about 20 ms
    /// for 256 KB on one core) and ZDICT needs about 10 bytes of memory per sample byte.
    public static let defaultSampleBytes = 256 * 1024

    /// The fewest samples training accepts. COVER and fastCover keep a quarter of the samples
    /// aside to choose their parameters and need at least 5 to train on.
    public static let minimumSamples = 8

    /// The capacities training accepts: libzstd's minimum dictionary size, up to 1 MiB, far
    /// more than Dally's sections can use.
    public static let capacities = 256...(1 << 20)

    /// Trains a dictionary from `samples`, typical messages of one kind (the recent sections of
    /// one table), so that messages like them compress with it. Uses libzstd's ZDICT.
    ///
    /// For example, every so often per table:
    ///
    /// ```swift
    /// let dictionary = try ZstdDictionary.train(
    ///     samples: recentSections, capacity: 4096, id: nextID, level: 3)
    /// ```
    ///
    /// Samples are best whole messages as they will be compressed, in the order they were
    /// sent; zstd's advice is in the order of a hundred times the capacity in all. Few samples,
    /// or samples with little in common, usually give a dictionary that helps less rather than
    /// an error, so compare the ratio with and without the result before adopting it. Training costs time (see `dally-bench codec`)
    /// and about 10 bytes of memory per sample byte, so run it off the request path.
    ///
    /// - Parameters:
    ///   - capacity: The most bytes the dictionary may take, in ``capacities``. The result can
    ///     be smaller when the samples hold less worth keeping.
    ///   - id: The id to write into the dictionary, in ``validIDs``.
    ///   - level: The zstd level messages will be compressed at: the entropy tables are tuned
    ///     for it. Any level ``FramedZstd`` accepts.
    ///   - method: How the content is chosen; see ``TrainingMethod``.
    /// - Throws: `.reservedDictionaryID`, `.invalidLevel`, `.invalidDictionary` for a capacity
    ///   outside ``capacities``; `.notEnoughSamples` for fewer than ``minimumSamples`` samples or
    ///   fewer sample bytes than `capacity` (the message says what is needed); `.library` when
    ///   ZDICT fails, which it does when it finds nothing to learn (samples too small, all
    ///   alike, or incompressible) and says so.
    public static func train(
        samples: [[UInt8]],
        capacity: Int,
        id: UInt32,
        level: Int,
        method: TrainingMethod = .fastCover
    ) throws(CompressionError) -> ZstdDictionary {
        guard validIDs.contains(id) else { throw .reservedDictionaryID(id) }
        guard ZstdEncoder.accepts(level: level) else { throw .invalidLevel(level, coding: .zstd) }
        guard capacities.contains(capacity) else {
            throw .invalidDictionary("a capacity of \(capacity) bytes; use \(capacities.lowerBound) to \(capacities.upperBound)")
        }
        let total = samples.reduce(0) { $0 + $1.count }
        let notEnough = CompressionError.notEnoughSamples(
            samples: samples.count, bytes: total, neededSamples: minimumSamples, neededBytes: capacity)
        guard samples.count >= minimumSamples, total >= capacity, samples.count <= Int(UInt32.max) else {
            throw notEnough
        }
        var flat: [UInt8] = []
        flat.reserveCapacity(total)
        for sample in samples { flat.append(contentsOf: sample) }
        let sizes = samples.map(\.count)
        let parameters = ZDICT_params_t(compressionLevel: Int32(level), notificationLevel: 0, dictID: id)
        var dictionary = [UInt8](repeating: 0, count: capacity)
        let written = flat.withUnsafeBytes { flat in
            sizes.withUnsafeBufferPointer { sizes in
                dictionary.withUnsafeMutableBytes { out in
                    train(method, into: out, samples: flat, sizes: sizes, parameters: parameters)
                }
            }
        }
        guard ZDICT_isError(written) == 0 else {
            let code = ZSTD_getErrorCode(written)
            var message = "zdict: " + String(cString: ZDICT_getErrorName(written))
            // ZDICT's way of saying the samples hold too little to learn from.
            if code == ZSTD_error_srcSize_wrong || code == ZSTD_error_dictionaryCreation_failed {
                message += " (the samples hold nothing to learn: too small, all alike, or incompressible)"
            }
            throw .library(message)
        }
        dictionary.removeLast(capacity - written)
        return try ZstdDictionary(id: id, bytes: dictionary)
    }

    /// Runs `method` into `out`, then finalizes: entropy tables for `parameters`' level, and
    /// its id. Returns the dictionary's size or a ZDICT error code.
    private static func train(
        _ method: TrainingMethod,
        into out: UnsafeMutableRawBufferPointer,
        samples: UnsafeRawBufferPointer,
        sizes: UnsafeBufferPointer<Int>,
        parameters: ZDICT_params_t
    ) -> Int {
        let count = UInt32(sizes.count)
        switch method {
        case .fastCover:
            // ZDICT_trainFromBuffer (stable API) picks the content with fastCover but writes an
            // id of its choosing and level-3 tables; finalizing its content again writes ours.
            let trained = ZDICT_trainFromBuffer(out.baseAddress, out.count, samples.baseAddress, sizes.baseAddress, count)
            guard ZDICT_isError(trained) == 0, let base = out.baseAddress else { return trained }
            let header = ZDICT_getDictHeaderSize(base, trained)
            guard ZDICT_isError(header) == 0 else { return header }
            return ZDICT_finalizeDictionary(
                base, out.count, base + header, trained - header, samples.baseAddress, sizes.baseAddress, count, parameters)
        case .cover:
            var cover = ZDICT_cover_params_t()
            cover.nbThreads = 1
            cover.splitPoint = 0.75
            cover.zParams = parameters
            return ZDICT_optimizeTrainFromBuffer_cover(
                out.baseAddress, out.count, samples.baseAddress, sizes.baseAddress, count, &cover)
        case .legacy:
            let legacy = ZDICT_legacy_params_t(selectivityLevel: 0, zParams: parameters)
            return ZDICT_trainFromBuffer_legacy(
                out.baseAddress, out.count, samples.baseAddress, sizes.baseAddress, count, legacy)
        }
    }
}
