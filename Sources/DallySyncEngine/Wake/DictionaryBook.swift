import DallyCompression
import DallyStore
import DallySync
import Synchronization

/// The gateway's compression dictionaries, one per table: trained from the table's recent
/// outgoing sections, used only once the cloud has acknowledged them, and retrained when the
/// ratio they give degrades (see `docs/PROTOCOL.md`, dictionaries).
///
/// Small batches are where a dictionary pays: a section of a few rows has too little of its
/// own to compress against, and a dictionary gives it the table's column names, ids and
/// typical values up front. The book decides; ``DictionaryExchange`` uploads and retires over the uplinks
/// the table may use, since a dictionary holds pieces of the table's data.
final class DictionaryBook: Sendable {
    /// How dictionaries are trained and when. The defaults are what `dally-bench codec`
    /// measured (README, codec): 2–4 KiB dictionaries are within 1% of each other and beat
    /// larger ones on small sections; ~10 sections (16 KiB) already train within 2% of a full
    /// budget; on unchanged traffic the ratio of a 128 KiB window wanders by about ±2%, while
    /// new ids and values cost ~4% and a new column 7–19%.
    struct Settings: Sendable {
        /// The size of a trained dictionary.
        var capacity = ZstdDictionary.defaultCapacity
        /// The most recent section bytes kept per table to train on.
        var sampleBudget = ZstdDictionary.defaultSampleBytes
        /// The least sample bytes a first training needs.
        var minimumSamples = 16 * 1024
        /// Raw bytes compressed with a dictionary before its ratio is taken (and again for
        /// each later comparison).
        var window = 128 * 1024
        /// Retrain when a window compresses this much worse (as a fraction) than the first.
        var degradation = 0.08
        var level = FramedZstd.defaultLevel
        /// The largest section whose ratio is measured. Past it a dictionary moves the ratio by
        /// a few percent at most (`dally-bench codec`, level 6: 1,000-row sections 3.83× with
        /// theirs, 3.74× without), less than ``degradation``, so the section says little of how
        /// well the dictionary fits; and measuring compresses the section a second time (a
        /// drain's 5,000-row sections, ~480 KB each, doubled the gateway's zstd work).
        var largestMeasured = 16 * 1024
    }

    /// A dictionary the cloud should get, for one table.
    struct Upload: Sendable {
        let table: String
        let dictionary: ZstdDictionary
    }

    private struct Shelf {
        var samples: [[UInt8]] = []
        var sampleBytes = 0
        /// Sample bytes at the last training attempt that failed: wait for more before retrying.
        var failedAt: Int?
        /// Acknowledged: used to compress.
        var current: ZstdDictionary?
        /// Trained, not yet acknowledged.
        var pending: ZstdDictionary?
        /// The first window's ratio with `current`, and the window being filled.
        var baseline: Double?
        var windowRaw = 0
        var windowCompressed = 0
        /// The window's ratio degraded: train anew from the samples since.
        var stale = false
        /// A training of this table is under way (outside the lock): another call leaves it be.
        var training = false
    }

    private struct State {
        var shelves: [String: Shelf] = [:]
        /// Acknowledged dictionaries replaced by newer ones: to delete in the cloud.
        var retired: [UInt32] = []
    }

    let settings: Settings
    private let state: Mutex<State>
    /// Chooses ids for new dictionaries; random so that a replica that lost its store does not
    /// reuse an id the cloud holds with other bytes.
    private let nextID: @Sendable () -> UInt32

    init(settings: Settings, kept: [KeptDictionary], nextID: @escaping @Sendable () -> UInt32 = DictionaryBook.randomID) {
        self.settings = settings
        self.nextID = nextID
        var state = State()
        for entry in kept {
            guard let dictionary = try? ZstdDictionary(id: entry.id, bytes: entry.bytes) else { continue }
            var shelf = state.shelves[entry.table] ?? Shelf()
            if entry.ackedAt != nil {
                if let older = shelf.current { state.retired.append(older.id) }
                shelf.current = dictionary
                shelf.pending = nil
            } else {
                shelf.pending = dictionary
            }
            state.shelves[entry.table] = shelf
        }
        self.state = Mutex(state)
    }

    static func randomID() -> UInt32 {
        UInt32.random(in: StoredDictionary.firstPrivateID...StoredDictionary.lastPrivateID)
    }

    /// The dictionary to compress `table`'s sections with, if the cloud holds one.
    func dictionary(for table: String) -> ZstdDictionary? {
        state.withLock { $0.shelves[table]?.current }
    }

    /// Raw bytes measured into `table`'s current window (since its last comparison).
    func windowBytes(of table: String) -> Int {
        state.withLock { $0.shelves[table]?.windowRaw ?? 0 }
    }

    /// Notes a section as sent: a sample to train on, and a measure of how well the table's
    /// dictionary still fits it. The measure compresses the section once more on its own, as
    /// its frame may have been shared with others; sections too large for a dictionary frame
    /// (``FramedZstd/defaultDictionaryLimit(level:)``) or for a telling measure
    /// (``Settings/largestMeasured``) are not measured.
    func record(table: String, section: ArraySlice<UInt8>) {
        let current = dictionary(for: table)
        var compressed: Int?
        if let current,
            section.count <= min(FramedZstd.defaultDictionaryLimit(level: settings.level), settings.largestMeasured)
        {
            compressed = try? FramedZstd.compress(segments: [.init(section, dictionary: current)], level: settings.level).count
        }
        let settings = self.settings
        state.withLock { state in
            var shelf = state.shelves[table] ?? Shelf()
            // ZDICT learns from many small samples better than from a few large ones.
            var offset = section.startIndex
            while offset < section.endIndex {
                let end = min(offset + 4096, section.endIndex)
                shelf.samples.append(Array(section[offset..<end]))
                shelf.sampleBytes += end - offset
                offset = end
            }
            while shelf.sampleBytes > settings.sampleBudget, !shelf.samples.isEmpty {
                shelf.sampleBytes -= shelf.samples.removeFirst().count
            }
            if let compressed, shelf.current?.id == current?.id {
                shelf.windowRaw += section.count
                shelf.windowCompressed += compressed
                if shelf.windowRaw >= settings.window {
                    let ratio = Double(shelf.windowCompressed) / Double(shelf.windowRaw)
                    if let baseline = shelf.baseline {
                        if ratio > baseline * (1 + settings.degradation) { shelf.stale = true }
                    } else {
                        shelf.baseline = ratio
                    }
                    shelf.windowRaw = 0
                    shelf.windowCompressed = 0
                }
            }
            state.shelves[table] = shelf
        }
    }

    /// Trains a dictionary for each table that has none (and enough samples) or whose ratio
    /// degraded; returns what the cloud should get. A table with a dictionary awaiting its
    /// acknowledgement, or being trained by a call at the same time, is not trained again.
    func train() -> [Upload] {
        let settings = self.settings
        let due: [(String, [[UInt8]])] = state.withLock { state in
            var due: [(String, [[UInt8]])] = []
            for (table, shelf) in state.shelves {
                guard !shelf.training, shelf.pending == nil, shelf.current == nil || shelf.stale,
                    shelf.sampleBytes >= settings.minimumSamples,
                    shelf.failedAt.map({ shelf.sampleBytes >= 2 * $0 }) ?? true
                else { continue }
                state.shelves[table]?.training = true
                due.append((table, shelf.samples))
            }
            return due
        }
        var trained: [Upload] = []
        for (table, samples) in due {
            let dictionary = try? ZstdDictionary.train(
                samples: samples, capacity: settings.capacity, id: nextID(), level: settings.level)
            state.withLock { state in
                guard var shelf = state.shelves[table] else { return }
                shelf.training = false
                if let dictionary {
                    shelf.pending = dictionary
                    shelf.failedAt = nil
                    trained.append(Upload(table: table, dictionary: dictionary))
                } else {
                    shelf.failedAt = shelf.sampleBytes
                }
                state.shelves[table] = shelf
            }
        }
        return trained
    }

    /// Dictionaries trained and not yet acknowledged, for the tables in `tables`.
    func uploads(for tables: Set<String>?) -> [Upload] {
        state.withLock { state in
            state.shelves.compactMap { table, shelf in
                guard let pending = shelf.pending, tables?.contains(table) ?? true else { return nil }
                return Upload(table: table, dictionary: pending)
            }.sorted { $0.table < $1.table }
        }
    }

    /// The cloud holds `id`: sections of its table are compressed with it from now on; the
    /// one it replaces is retired.
    func acknowledged(_ id: UInt32) {
        state.withLock { state in
            for (table, var shelf) in state.shelves where shelf.pending?.id == id {
                if let older = shelf.current { state.retired.append(older.id) }
                shelf.current = shelf.pending
                shelf.pending = nil
                shelf.baseline = nil
                shelf.stale = false
                shelf.windowRaw = 0
                shelf.windowCompressed = 0
                state.shelves[table] = shelf
            }
        }
    }

    /// The cloud does not hold `id` (it lost its store, or deleted it): stop compressing with
    /// it, and offer it again.
    func unknown(_ id: UInt32) {
        state.withLock { state in
            for (table, var shelf) in state.shelves where shelf.current?.id == id {
                shelf.pending = shelf.pending ?? shelf.current
                shelf.current = nil
                state.shelves[table] = shelf
            }
        }
    }

    /// Retired dictionaries to delete in the cloud.
    var retired: [UInt32] { state.withLock { $0.retired } }

    func deleted(_ id: UInt32) {
        state.withLock { $0.retired.removeAll { $0 == id } }
    }
}
