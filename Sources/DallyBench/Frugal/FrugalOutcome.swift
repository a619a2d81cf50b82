import DallyCore
import DallyFrugal
import DallyObjects
import DallySync

/// What one strategy did with the trace, as counted outside it: at the relays' sockets, by the
/// radio model over the relays' activity, and in the cloud it filled.
struct FrugalOutcome {
    var name: String
    /// Bytes through the relays, headers included, and requests, per network class.
    var up: [String: Int] = [:]
    var down: [String: Int] = [:]
    var requests: [String: Int] = [:]
    /// The radios this strategy would wake: Dally's gateway has one per class; the baselines'
    /// devices one each (`perDevice`), or all share one per class (`shared`).
    var radios = RadioUsage()
    var sharedRadios: RadioUsage?
    var wakeUpsByClass: [String: Int] = [:]
    /// Bytes (both ways, headers included) of requests carrying wifi-only tables over cellular.
    var wifiOnlyBytesOverCellular = 0
    /// Object bytes sent, per network class: the bodies of chunk uploads as they went on the
    /// wire (no headers, asks or manifests). For Dally, the gateway's
    /// `sync.object_chunk_bytes_on_wire`, attributed to cellular when it grew while wifi was down
    /// (the relays forward bytes without reading them, so they cannot tell objects from rows).
    var objectBytes: [String: Int] = [:]
    /// Objects the cloud ends without (their rows name them, `GET /v1/objects/{hash}` is not 200).
    var missingObjects = 0
    var staleness = StalenessReport(perTable: [:], overall: StalenessStats())
    /// What the gateway itself counted, for Dally.
    var gatewayDeadlineMisses: Int?
    var dictionaries = 0
    /// Rows of the cloud's final data that differ from the trace's final state.
    var mismatchedRows = 0
    var missingRows = 0
    var seconds = 0.0

    var bytes: Int { up.values.reduce(0, +) + down.values.reduce(0, +) }
    var totalRequests: Int { requests.values.reduce(0, +) }
    var totalObjectBytes: Int { objectBytes.values.reduce(0, +) }

    mutating func count(_ counts: RelayCounts, networkClass: String) {
        up[networkClass, default: 0] += counts.bytesUp
        down[networkClass, default: 0] += counts.bytesDown
        requests[networkClass, default: 0] += counts.requests
    }
}
