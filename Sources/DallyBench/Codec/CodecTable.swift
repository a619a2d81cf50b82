import DallyCompression
import DallyCore
import DallySync
import Foundation

/// The generated tables.
enum CodecTable: String, CaseIterable, Hashable {
    /// `[id, null, updated_at, "put", "dev-0007", 21.4, 48.0, 87, -61]`: readings, new rows only.
    case telemetry
    /// One row per device, updated in place: `["dev-0007", 4711, updated_at, "put", true, "2.4.1", …]`.
    case status
    /// Orders with a JSON array of items; one in five an update of an earlier order.
    case orders

    var columns: [String] {
        switch self {
        case .telemetry: ["device", "temp", "humidity", "battery", "rssi"]
        case .status: ["online", "firmware", "last_seen", "uptime_s", "battery", "error"]
        case .orders: ["customer", "total", "paid", "items", "status"]
        }
    }
}
