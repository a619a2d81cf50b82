/// An error a client or operator can act on: a stable code, a message that says what to fix,
/// and the field (column, parameter or key) it is about.
///
/// Domain code raises these; only the HTTP layer maps a ``Code`` to a status.
public struct DallyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Stable, documented error codes. Clients may switch on the raw value.
    public enum Code: String, Sendable, CaseIterable {
        case malformedJSON = "malformed_json"
        case badRequest = "bad_request"
        case badQuery = "bad_query"
        case invalidID = "invalid_id"
        case unauthorized
        case forbidden
        /// A write or read outside the table's scope (the gateway's `scope_writes = "reject"`, or
        /// a client token pinned to a scope).
        case outOfScope = "out_of_scope"
        case unknownTable = "unknown_table"
        case notFound = "not_found"
        case methodNotAllowed = "method_not_allowed"
        case versionMismatch = "version_mismatch"
        case bodyTooLarge = "body_too_large"
        case tooManyRows = "too_many_rows"
        case unknownColumn = "unknown_column"
        case wrongType = "wrong_type"
        case objectColumn = "object_column"
        case batchRejected = "batch_rejected"
        /// A batch id a gateway used before, sent again with different content.
        case batchReused = "batch_reused"
        /// A `Content-Encoding` the server does not speak.
        case unsupportedEncoding = "unsupported_encoding"
        /// A compressed body that does not decompress.
        case badEncoding = "bad_encoding"
        /// A body compressed with a dictionary the cloud does not hold for this gateway.
        case unknownDictionary = "unknown_dictionary"
        /// Bytes offered as a dictionary that are not a zstd dictionary with the id given.
        case badDictionary = "bad_dictionary"
        /// A dictionary id used before with other bytes, or one dictionary too many.
        case dictionaryConflict = "dictionary_conflict"
        /// An object larger than the configured maximum (`objects.max_bytes`).
        case objectTooLarge = "object_too_large"
        /// Bytes whose SHA-256 is not the one the request named.
        case hashMismatch = "hash_mismatch"
        /// A row write naming an object this gateway does not hold.
        case unknownObject = "unknown_object"
        /// An object that is not on this gateway and cannot be fetched now (no network its
        /// policy allows is up, or the cloud does not have it yet).
        case objectUnavailable = "object_unavailable"
        /// An on-demand fetch that did not finish within `objects.fetch_timeout`.
        case objectFetchTimeout = "object_fetch_timeout"
        /// A manifest naming chunks the cloud does not hold; the answer lists them.
        case missingChunks = "missing_chunks"
        /// A chunk frame's `Dally-Upload-Offset` is not where the cloud's partial chunk ends.
        case uploadOffset = "upload_offset"
        /// A `Range` that selects no byte of the object.
        case rangeNotSatisfiable = "range_not_satisfiable"
        /// A request line and headers over what the server reads (80 KiB, 1,000 fields).
        case headersTooLarge = "headers_too_large"
        /// A plain-HTTP request to a port that speaks TLS only; the connection is closed.
        case tlsRequired = "tls_required"
        /// A request's body stopped coming for `server.body_timeout`; the connection is closed.
        case bodyTimeout = "body_timeout"
        /// Sync was asked of a gateway with no cloud configured, or of a local-only table.
        case syncDisabled = "sync_disabled"
        case tooManyWaiters = "too_many_waiters"
        case shuttingDown = "shutting_down"
        /// The cloud cannot reach its database (PostgreSQL restarting, network down); retry
        /// after `Retry-After` seconds, with the same batch id.
        case storeUnavailable = "store_unavailable"
        /// A table's outbox is at its bound (`max_pending`, `on_full = "reject"`), or the data
        /// directory's disk is full: the write was refused and nothing of it saved.
        case insufficientStorage = "insufficient_storage"
        /// A cursor (`since`) older than the horizon: the tombstones between it and the
        /// horizon were purged, so the reader must start again from 0 (PROTOCOL.md §4.8).
        case resyncRequired = "resync_required"
        case storage
        case internalError = "internal"
    }

    public let code: Code
    public let message: String
    public let field: String?
    /// For `version_mismatch`: the row as it is now, so the client can merge and retry.
    public let current: StoredRow?
    /// For `resync_required`: the horizon the reader's cursor is behind.
    public let horizon: Int64?

    public init(_ code: Code, _ message: String, field: String? = nil, current: StoredRow? = nil, horizon: Int64? = nil) {
        self.horizon = horizon
        self.code = code
        self.message = message
        self.field = field
        self.current = current
    }

    public var description: String {
        field.map { "\(code.rawValue) (\($0)): \(message)" } ?? "\(code.rawValue): \(message)"
    }
}
