import DallyCore

/// The body of every error answer: `{"error":{"code":…,"message":…,"field":…},"current":{…}}`.
///
/// `code` is the stable ``DallyError/Code`` a client matches on; `field` names the offending
/// input when there is one; `current` is the row as it is now, for a version mismatch.
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
    public let current: JSONValue?

    /// The document of `error`; `current` is rendered with `schema`, the table's, when known.
    public init(_ error: DallyError, schema: TableSchema? = nil) {
        self.error = Body(code: error.code.rawValue, message: error.message, field: error.field, horizon: error.horizon)
        current = schema.flatMap { schema in error.current.map { $0.json(schema: schema) } }
    }
}
