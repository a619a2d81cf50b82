import DallyCore
import DallySync
import Foundation
import GRDB

/// Which tables a batch may carry: those the uplink about to send it may carry.
public struct BatchScope: Sendable {
    /// Tables whose pending changes may go up; nil for every synced table.
    public var uploads: Set<String>?
    /// Tables whose changes may come down in the answer; nil for every synced table.
    public var pulls: Set<String>?
    /// Narrows `pulls` for a new batch given the tables it carries up (a batch must stay
    /// resendable over every class its uploads allow); nil keeps `pulls`.
    public var pullsRiding: (@Sendable ([String]) -> Set<String>)?

    public init(
        uploads: Set<String>?, pulls: Set<String>?, pullsRiding: (@Sendable ([String]) -> Set<String>)? = nil
    ) {
        self.uploads = uploads
        self.pulls = pulls
        self.pullsRiding = pullsRiding
    }

    /// The same uploads, with nothing coming down in the answer: for a batch built while the
    /// answer before it is still being applied, whose cursors would be read too early.
    public var withoutPulls: BatchScope { BatchScope(uploads: uploads, pulls: [], pullsRiding: nil) }

    /// Every synced table, both ways.
    public static let everything = BatchScope(uploads: nil, pulls: nil)

    func allowsUpload(_ table: String) -> Bool { uploads?.contains(table) ?? true }
    func allowsPull(_ table: String) -> Bool { pulls?.contains(table) ?? true }

    /// Whether a batch in flight fits: everything it carries, both ways, is allowed.
    func fits(_ flight: InFlight) -> Bool {
        flight.uploads.allSatisfy(allowsUpload) && flight.pulls.allSatisfy(allowsPull)
    }
}
