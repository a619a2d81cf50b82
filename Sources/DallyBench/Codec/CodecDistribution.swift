import DallyCompression
import DallyCore
import DallySync
import Foundation

/// What the traffic looks like; the changed ones model a gateway whose devices or readings moved.
struct CodecDistribution: Sendable {
    var name: String
    /// Devices are `dev-<firstDevice + n>`; customers `cus-<firstCustomer + n>`; SKUs `SKU-<firstSKU + n>`.
    var firstDevice = 0
    var firstCustomer = 10_000
    var firstSKU = 1_000
    /// Added to temperatures, in tenths of a degree, and to humidity, in tenths of a percent.
    var warmer = 0
    var damper = 0
    /// Prices are multiplied by this.
    var prices = 1.0
    var firmware = ["2.4.1", "2.4.0", "2.3.7"]
    /// Every table has one more column (a schema change): pressure, ip, currency.
    var extraColumn = false

    static let base = CodecDistribution(name: "base (as trained)")
    static let newIDs = CodecDistribution(name: "new ids", firstDevice: 5_000, firstCustomer: 60_000, firstSKU: 7_000)
    static let newValues = CodecDistribution(
        name: "new values", warmer: 150, damper: 250, prices: 1.37, firmware: ["3.0.2", "3.0.1", "2.9.9"])
    static let both = CodecDistribution(
        name: "new ids+values", firstDevice: 5_000, firstCustomer: 60_000, firstSKU: 7_000, warmer: 150, damper: 250,
        prices: 1.37, firmware: ["3.0.2", "3.0.1", "2.9.9"])
    static let newSchema = CodecDistribution(name: "new column", extraColumn: true)
    static let all = [base, newIDs, newValues, both, newSchema]
}
