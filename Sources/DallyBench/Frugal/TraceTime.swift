import AsyncHTTPClient
import DallyCompression
import DallyCore
import DallyFrugal
import DallyObjects
import DallySync
import Foundation
import NIOCore
import Synchronization

/// The trace time the baselines are at, for the relays' activity records.
final class TraceTime: Sendable {
    private let value = Mutex<Int64>(0)

    var now: Int64 {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}
