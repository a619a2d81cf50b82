import DallyCore
import Foundation
import GRDB
import Synchronization

/// The answer to a batch of row writes, in TinySync's shape.
public struct BatchOutcome: Sendable {
    public struct RowError: Sendable {
        public let id: String
        public let error: DallyError
    }

    public var saved: [String] = []
    public var errors: [RowError] = []
    /// The highest local sequence number the batch wrote, 0 when it wrote nothing.
    public var lastSeq: Int64 = 0

    public init(saved: [String] = [], errors: [RowError] = [], lastSeq: Int64 = 0) {
        self.saved = saved
        self.errors = errors
        self.lastSeq = lastSeq
    }
}
