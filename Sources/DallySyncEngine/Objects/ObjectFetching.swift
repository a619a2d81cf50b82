import DallyCore
import DallyObjects

/// Brings an object this gateway does not hold from the cloud, for a client's read of a row
/// whose object has not been fetched yet (a downstream row of an on-demand table, or one whose
/// scheduled download has not run).
///
/// The sync side implements it; a gateway without a cloud has none, and such reads are
/// answered `503 object_unavailable`.
public protocol ObjectFetching: Sendable {
    /// Returns once the object is whole in the chunk store and recorded as local
    /// (``DallyStore/ReplicaStore/recordLocalObject(_:)``); the read is then served from the
    /// store. Waits at most `objects.fetch_timeout`.
    ///
    /// - Throws: ``DallyError`` `object_unavailable` when no network the table's policy allows
    ///   is up or the cloud does not have the object, `object_fetch_timeout` when the fetch
    ///   did not finish in time.
    func fetch(_ reference: ObjectReference, table: String) async throws(DallyError)
}
