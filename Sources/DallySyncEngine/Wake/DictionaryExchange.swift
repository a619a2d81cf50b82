import DallyConfig
import DallyStore
import DallySync
import Logging
import Synchronization

/// Keeps the cloud's copy of the per-table compression dictionaries in step with the
/// gateway's ``DictionaryBook``: trains them, gives the cloud each new one, deletes retired
/// ones, and stops using one the cloud turns out not to hold.
///
/// Without a book (batches not compressed with zstd, or `dictionary_bytes = 0`) every step
/// does nothing.
final class DictionaryExchange: Sendable {
    /// The book the batch encoder compresses with; nil when dictionaries are off.
    let book: DictionaryBook?
    private let store: ReplicaStore
    private let now: @Sendable () -> Int64
    private let logger: Logger
    /// Dictionaries the cloud acknowledged since start.
    private let uploadedCount = Mutex<Int64>(0)

    init(store: ReplicaStore, link: CloudLink, now: @escaping @Sendable () -> Int64, logger: Logger) {
        self.store = store
        self.now = now
        self.logger = logger
        book = Self.book(store: store, link: link, logger: logger)
    }

    private static func book(store: ReplicaStore, link: CloudLink, logger: Logger) -> DictionaryBook? {
        guard link.compression == .zstd, link.dictionaryBytes > 0 else { return nil }
        var settings = DictionaryBook.Settings()
        settings.capacity = link.dictionaryBytes
        settings.level = link.level
        do {
            return DictionaryBook(settings: settings, kept: try store.keptDictionaries())
        } catch {
            logger.error("cannot read the kept dictionaries; training new ones", metadata: ["error": "\(error)"])
            return DictionaryBook(settings: settings, kept: [])
        }
    }

    var uploaded: Int64 { uploadedCount.withLock { $0 } }

    /// Trains the dictionaries that are due from the samples the book holds, and keeps them.
    /// A table whose dictionary awaits the cloud's acknowledgement is not trained again, so a
    /// second call in the same wake does nothing.
    func trainDue() async throws {
        guard let book else { return }
        for trained in book.train() {
            try await store.keepDictionary(
                KeptDictionary(
                    id: trained.dictionary.id, table: trained.table, bytes: trained.dictionary.bytes, createdAt: now()))
            logger.info(
                "trained a compression dictionary",
                metadata: [
                    "table": "\(trained.table)", "id": "\(trained.dictionary.id)",
                    "bytes": "\(trained.dictionary.bytes.count)",
                ])
        }
    }

    /// At the end of a wake, while the radio is up anyway: trains dictionaries that are due
    /// (``trainDue()``, unless the wake did already), gives the cloud those of tables this
    /// uplink may carry up (a dictionary holds pieces of its table's rows, so it follows the
    /// table's upload networks), and deletes retired ones.
    ///
    /// A failure to reach the cloud is logged and left for the next wake: the batches were
    /// sent already, and they never depend on a dictionary the cloud has not acknowledged.
    func tend(on uplink: Uplink, uploads tables: Set<String>?) async throws {
        guard let book else { return }
        try await trainDue()
        do {
            for upload in book.uploads(for: tables) {
                let traffic = try await uplink.client.upload(upload.dictionary, table: upload.table)
                uplink.recordAnswer(traffic, now: now())
                try await store.setDictionaryAcknowledged(id: upload.dictionary.id, at: now())
                book.acknowledged(upload.dictionary.id)
                uploadedCount.withLock { $0 += 1 }
            }
            for id in book.retired {
                let traffic = try await uplink.client.delete(dictionary: id)
                uplink.recordAnswer(traffic, now: now())
                try await store.dropDictionary(id: id)
                book.deleted(id)
            }
        } catch let error as CloudError {
            logger.warning(
                "cannot give the cloud a dictionary; the next wake tries again",
                metadata: ["uplink": "\(uplink.name)", "error": "\(error)"])
        }
    }

    /// Stops compressing with the dictionaries a refused body used; they are offered again.
    func forget(usedBy body: [UInt8], reason: String) async throws {
        guard let book else { return }
        let used = BatchSegments.cut(body).segments.compactMap { $0.table.flatMap(book.dictionary(for:))?.id }
        for id in Set(used) {
            book.unknown(id)
            try await store.setDictionaryAcknowledged(id: id, at: nil)
        }
        logger.warning(
            "the cloud does not hold a dictionary; sending without it and offering it again",
            metadata: ["dictionaries": "\(used)", "reason": "\(reason)"])
    }
}
