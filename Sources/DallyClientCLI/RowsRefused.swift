/// A batch the gateway answered with some rows refused (listed in the answer printed). Exit code 1.
public struct RowsRefused: Error, CustomStringConvertible {
    /// Rows refused, and rows in the batch.
    public let refused: Int
    public let total: Int
    /// The first refusal's code.
    public let firstCode: String

    /// `refused` of `total` rows refused, the first for `firstCode`.
    public init(refused: Int, total: Int, firstCode: String) {
        self.refused = refused
        self.total = total
        self.firstCode = firstCode
    }

    public var description: String { "\(refused) of \(total) rows refused (the first: \(firstCode))" }
}
