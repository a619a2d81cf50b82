/// A compression dictionary a gateway trained on one table's traffic and gave the cloud, so
/// that its batches' sections of that table can be compressed against it (see
/// `docs/PROTOCOL.md`, dictionaries).
///
/// The id is the one inside the zstd dictionary, which every frame compressed with it names in
/// its header; ids belong to the gateway that uploaded them, so two gateways may use the same.
public struct StoredDictionary: Sendable, Equatable {
    public var gateway: String
    public var id: UInt32
    /// The table whose sections it was trained on: the cloud compresses that table's pages for
    /// the gateway with it.
    public var table: String
    public var bytes: [UInt8]
    /// Milliseconds since 1970 when the cloud stored it.
    public var createdAt: Int64

    public init(gateway: String, id: UInt32, table: String, bytes: [UInt8], createdAt: Int64) {
        self.gateway = gateway
        self.id = id
        self.table = table
        self.bytes = bytes
        self.createdAt = createdAt
    }

    /// The smallest id a gateway may choose: zstd reserves 0…32767 for registered dictionaries.
    public static let firstPrivateID: UInt32 = 32_768
    /// The largest id: zstd reserves 2^31 and above.
    public static let lastPrivateID: UInt32 = (1 << 31) - 1

    /// Whether `id` is one a gateway may give its own dictionary.
    public static func isPrivate(_ id: UInt32) -> Bool { (firstPrivateID...lastPrivateID).contains(id) }
}

/// What became of a dictionary offered to the cloud.
public enum DictionaryOffer: Sendable, Equatable {
    /// Stored now.
    case stored
    /// The cloud had it already, byte for byte: an upload retried after a lost answer.
    case alreadyStored
    /// The id is taken by other bytes.
    case idTaken
    /// The gateway holds as many dictionaries as the cloud allows; it must delete one first.
    case full(limit: Int)
}
