import Foundation
import GRDB

/// A compression dictionary the replica trained on one table's outgoing sections.
public struct KeptDictionary: Sendable, Equatable {
    public var id: UInt32
    public var table: String
    public var bytes: [UInt8]
    /// Milliseconds since 1970.
    public var createdAt: Int64
    /// When the cloud said it holds it; until then no body may be compressed with it.
    public var ackedAt: Int64?

    public init(id: UInt32, table: String, bytes: [UInt8], createdAt: Int64, ackedAt: Int64? = nil) {
        self.id = id
        self.table = table
        self.bytes = bytes
        self.createdAt = createdAt
        self.ackedAt = ackedAt
    }
}
