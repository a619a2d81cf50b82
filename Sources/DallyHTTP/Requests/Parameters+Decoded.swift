import Foundation
import Hummingbird

extension Parameters {
    /// A path parameter as the client meant it, percent-decoded.
    ///
    /// RFC 3986 §2.3 makes `o%31` and `o1` the same URI, and clients encode differently: some
    /// escape `~`, `-` or `.` (JavaScript's `escape`, older Python `quote`), which a row id may
    /// hold. The router hands the segment over as it came; read so, a row `o~1` written by such
    /// a client was refused `invalid_id`. A segment that does not decode (`%ZZ`) is returned as
    /// it came, for the route's own check to refuse by name.
    ///
    /// ```swift
    /// let id = context.parameters.decoded("id")   // "o1" for /v1/tables/orders/rows/o%31
    /// ```
    public func decoded(_ name: String) -> String {
        guard let raw = get(name) else { return "" }
        guard raw.contains("%") else { return raw }
        return raw.removingPercentEncoding ?? raw
    }
}
