import DallyCompression
import DallyCore
import DallySync
import Synchronization

/// The gateways' dictionaries, ready to decode with: read from the store the first time a body
/// names one, then kept in memory (a few dictionaries per gateway, each at most
/// `limits.max_dictionary_bytes`).
final class DictionaryShelf: Sendable {
    private struct Key: Hashable {
        let gateway: String
        let id: UInt32
    }

    private let store: any CloudStore
    private let loaded = Mutex<[Key: ZstdDictionary]>([:])
    private let decoded = Mutex<Int64>(0)

    /// Bodies that named at least one dictionary, all of which the cloud held.
    var bodiesDecoded: Int64 { decoded.withLock { $0 } }
    /// Dictionaries in memory.
    var inMemory: Int { loaded.withLock { $0.count } }

    init(store: any CloudStore) {
        self.store = store
    }

    /// The dictionaries `ids` of `gateway`.
    ///
    /// - Throws: `unknown_dictionary` naming the first id the cloud does not hold for it; the
    ///   gateway then sends the same batch compressed without it.
    func dictionaries(_ ids: Set<UInt32>, of gateway: String) async throws -> [UInt32: ZstdDictionary] {
        var found: [UInt32: ZstdDictionary] = [:]
        for id in ids.sorted() {
            if let dictionary = loaded.withLock({ $0[Key(gateway: gateway, id: id)] }) {
                found[id] = dictionary
                continue
            }
            guard let stored = try await store.dictionary(gateway: gateway, id: id),
                let dictionary = try? ZstdDictionary(id: id, bytes: stored.bytes)
            else {
                throw DallyError(
                    .unknownDictionary,
                    "the body names dictionary \(id), which the cloud does not hold for gateway '\(gateway)'; upload it with PUT /v1/dictionaries/\(id) or compress without it")
            }
            loaded.withLock { $0[Key(gateway: gateway, id: id)] = dictionary }
            found[id] = dictionary
        }
        decoded.withLock { $0 += 1 }
        return found
    }

    /// Drops a deleted dictionary from memory.
    func forget(gateway: String, id: UInt32) {
        _ = loaded.withLock { $0.removeValue(forKey: Key(gateway: gateway, id: id)) }
    }
}
