import DallyCore
import DallySync
import Foundation

/// How new rows are named: random uuid-like ids (v4-like, the default) land all over the
/// primary key's B-tree; time-ordered ones (v7-like: a growing 48-bit prefix) land at its end.
enum BenchIDs: String, CaseIterable, Sendable {
    case uuid
    case ordered
}
