import DallyCore
import DallySync
import GRDB

/// One row's conflict or rejection, as listed by `GET /v1/conflicts`.
///
/// `open` records need an app: a `manual` conflict (the cloud kept its row, the local change
/// waits aside) or a rejected change (parked until fixed). Conflicts the table's policy settled
/// are kept as `resolved`, so that nothing is dropped silently.
public struct ConflictRecord: Sendable, Equatable {
    public enum Kind: String, Sendable { case conflict, error }
    public enum Status: String, Sendable { case open, resolved }

    public let table: String
    public let id: String
    public let kind: Kind
    public let status: Status
    /// Milliseconds since 1970 when the gateway learned of it.
    public let detectedAt: Int64
    public let policy: String?
    public let winner: String?
    /// The cloud's row at the time (values by column name, as JSON text); nil for an error.
    public let server: ServerSide?
    public let error: BatchAnswer.RowRejection?
    /// The row as the replica holds it now.
    public let local: StoredRow?

    public struct ServerSide: Sendable, Equatable {
        public let version: Int64
        public let updatedAt: Int64
        public let deleted: Bool
        /// `{"column": value, …}`.
        public let valuesJSON: String
    }
}
