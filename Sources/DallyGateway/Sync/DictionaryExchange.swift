import DallyStore
import DallySync
import Foundation

extension Syncer {
    /// At the end of a wake, while the radio is up anyway: trains dictionaries that are due,
    /// gives the cloud those of tables this uplink may carry up (a dictionary holds pieces of
    /// its table's rows, so it follows the table's upload networks), and deletes retired ones.
    ///
    /// A failure here is logged and left for the next wake: the batches were sent already, and
    /// they never depend on a dictionary the cloud has not acknowledged.
    func tendDictionaries(on uplink: Uplink, uploads tables: Set<String>?) async throws {
        guard let book = dictionaries else { return }
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
        do {
            for upload in book.uploads(for: tables) {
                let traffic = try await uplink.client.upload(upload.dictionary, table: upload.table)
                uplink.recordAnswer(traffic, now: now())
                try await store.setDictionaryAcknowledged(id: upload.dictionary.id, at: now())
                book.acknowledged(upload.dictionary.id)
                state.withLock { $0.status.dictionariesUploaded += 1 }
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
    func forgetDictionaries(usedBy body: [UInt8], reason: String) async throws {
        guard let book = dictionaries else { return }
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
