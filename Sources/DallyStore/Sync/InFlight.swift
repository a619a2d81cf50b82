import DallyCore
import DallySync
import Foundation
import GRDB

/// A batch recorded as in flight: sent (or about to be), answer not yet applied.
public struct InFlight: Sendable, Equatable {
    public let batchID: String
    /// Milliseconds since 1970 when it was built.
    public let createdAt: Int64
    public let uploads: [String]
    public let pulls: [String]
}
