import DallyCore
import DallyObjects
import Foundation
import GRDB

/// What waits to go up per table: objects, their bytes not yet sent, the oldest first-dirty
/// time. The scheduler weighs the object stream of a table by these.
public struct ObjectUploadSummary: Sendable, Equatable {
    public let table: String
    public let objects: Int64
    public let bytes: Int64
    public let oldestFirstDirtyAt: Int64?
}
