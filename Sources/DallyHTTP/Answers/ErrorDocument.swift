import DallyCore

/// The body of every error answer: `{"error":{"code":…,"message":…,"field":…}}`.
///
/// `code` is the stable ``DallyError/Code`` a client matches on; `field` names the offending
/// input when there is one. A version mismatch's `current` row is written beside it by
/// ``JSONResponse/error(_:schema:)``, as the row routes write rows.
public struct ErrorDocument: Encodable, Sendable {
    public struct Body: Encodable, Sendable {
        public let code: String
        public let message: String
        public let field: String?
        /// For `resync_required`: the horizon to start again behind (PROTOCOL.md §4.8).
        public let horizon: Int64?

        public init(code: String, message: String, field: String?, horizon: Int64? = nil) {
            self.horizon = horizon
            self.code = code
            self.message = message
            self.field = field
        }
    }

    public let error: Body

    /// The document of `error`.
    public init(_ error: DallyError) {
        self.error = Body(code: error.code.rawValue, message: error.message, field: error.field, horizon: error.horizon)
    }
}
