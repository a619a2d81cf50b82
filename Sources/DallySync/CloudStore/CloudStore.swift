import DallyCore
import DallyObjects

/// The cloud's primary copy, behind the narrow interface the HTTP layer needs.
///
/// An implementation assigns versions (one counter per table; every accepted change takes the
/// next value), applies each batch in one transaction, remembers each batch's answer so that a
/// retry changes nothing, and serves changes in version order. SQLite is the embedded
/// implementation; PostgreSQL (`DallyCloudPostgres`) the one several cloud nodes share. Both
/// run the same contract suite (`Tests/DallyCloudStoreTests`).
public protocol CloudStore: Sendable {
    /// The configured tables, by name.
    func schema(_ table: String) -> TableSchema?

    /// Applies `batch` from `gateway` in one transaction and returns the answer, with one
    /// bounded downstream page of the tables in `batch.since`.
    ///
    /// A batch id this gateway used before returns the stored results and changes nothing.
    ///
    /// - Parameters:
    ///   - fingerprint: a hash of the request body, to tell a retry from a different batch
    ///     that reuses an id (refused with `batch_reused`).
    ///   - pageRows: the most downstream rows in the answer, across tables.
    ///   - now: milliseconds since 1970, recorded with the answer.
    func apply(_ batch: BatchRequest, fingerprint: UInt64, pageRows: Int, now: Int64) async throws -> BatchAnswer

    /// What the store remembers of batch `batchID` from `gateway`, or nil (PROTOCOL.md §6,
    /// `GET /v1/batches/{id}`); a default that remembers nothing is provided.
    func storedResults(gateway: String, batchID: String) async throws -> StoredBatchResults?

    /// Changes of `table` after version `since`, in version order, leaving out rows whose last
    /// change came from `excludingReplica`.
    ///
    /// With a `scope` (checked against the table: its columns are ``TableSchema/scopeColumns``)
    /// the page holds, found through the scope columns' indexes and the move log, the rows in
    /// the scope, and the rows that were in it before a change after `since` took them out:
    /// those come as tombstones when deleted, else as ``ChangePage/ChangedRow/left`` entries
    /// (PROTOCOL.md §7.4). Other rows are left out, and the cursor still moves past them.
    ///
    /// A cursor behind the table's horizon or ahead of its version gets a page from version 0
    /// marked `resync`, own rows included (``DownstreamStart``); a reader `resyncing` pages on
    /// from its cursor, own rows included. Batch answers' pages follow the same rule, with
    /// ``BatchRequest/resyncing``.
    func changes(
        table: String, since: Int64, limit: Int, excludingReplica: String?, scope: TypedScope?, resyncing: Bool
    ) async throws -> ChangePage

    /// Whether `table` has a change after `since` from a replica other than `excludingReplica`
    /// (within `scope`, as ``changes(table:since:limit:excludingReplica:scope:)`` counts them).
    ///
    /// False must be exact (a notify waiter would miss a change); true may be spurious when
    /// such a change was overwritten since by `excludingReplica` (the gateway then pulls a page
    /// without that row), so that an implementation can answer from the commits it heard of.
    func hasChanges(table: String, since: Int64, excludingReplica: String?, scope: TypedScope?) async throws -> Bool

    /// The current version of every table.
    var versions: [String: Int64] { get }

    /// Calls `observer` with the new versions of the tables each commit changed.
    func observeCommits(_ observer: @escaping @Sendable ([String: Int64]) -> Void)

    /// Forgets the answers of batches received before `before` (milliseconds since 1970);
    /// returns how many were forgotten.
    func forgetAnswers(receivedBefore before: Int64) async throws -> Int

    // MARK: Lifecycle

    /// Remembers how far gateways have pulled (the latest of each gateway and table wins).
    func recordCursors(_ cursors: [GatewayCursor]) async throws

    /// Every gateway's cursors as last recorded.
    func gatewayCursors() async throws -> [GatewayCursor]

    /// Keeps what `told.gateway` told it declares, replacing what it told before (a later
    /// `toldAt` wins, as two nodes may hear one gateway at once).
    func recordDeclarations(_ told: ToldDocument) async throws

    /// Every gateway's declarations as last told, by gateway id.
    func toldDeclarations() async throws -> [ToldDocument]

    /// Purges `table`'s tombstones with a version at most `upTo` whose `updated_at` is before
    /// `before` (ms since 1970), raising the table's horizon to the highest version purged in
    /// the same transaction; returns how many were purged.
    func purgeTombstones(table: String, upTo version: Int64, before: Int64) async throws -> Int64

    /// Counts for the stats endpoint.
    func statistics() async throws -> CloudStoreStatistics

    /// Throws `store_unavailable` while the store cannot be reached (a database server down),
    /// as its operations would; `GET /readyz` answers with it. A default that is always
    /// reachable (an embedded store) is provided.
    func requireReachable() throws(DallyError)

    // MARK: Dictionaries

    /// Stores a gateway's dictionary unless its id is taken or the gateway holds `limit` already.
    func offerDictionary(_ dictionary: StoredDictionary, limit: Int) async throws -> DictionaryOffer

    /// A gateway's dictionary by id, or nil.
    func dictionary(gateway: String, id: UInt32) async throws -> StoredDictionary?

    /// A gateway's dictionaries, oldest first, without their bytes (`bytes` empty).
    func dictionaries(gateway: String) async throws -> [StoredDictionary]

    /// Deletes a gateway's dictionary; false when there was none with that id.
    func deleteDictionary(gateway: String, id: UInt32) async throws -> Bool

    // MARK: Objects

    /// Where the chunks of the cloud's objects are kept, keyed by their hash. The caller checks
    /// a chunk's hash before it stores one.
    var chunks: any ChunkStore { get }

    /// Records an object whose chunks the caller has checked to hash, in order, to
    /// `manifest.hash`. The store checks that every chunk is still held in the same step as it
    /// records the object, so that ``collectObjects(before:)`` cannot remove them in between.
    ///
    /// - Parameter now: milliseconds since 1970, the object's creation time for collection.
    func storeObject(_ manifest: ObjectManifest, now: Int64) async throws -> ObjectOffer

    /// The manifest of an object the cloud holds complete, or nil.
    func manifest(of hash: ContentHash) async throws -> ObjectManifest?

    /// Which of `hashes` name objects the cloud holds complete.
    func completeObjects(_ hashes: [ContentHash]) async throws -> Set<ContentHash>

    /// Deletes the objects created before `cutoff` (ms since 1970) that no row of any table
    /// references, then the chunks stored before `cutoff` that no remaining object lists.
    ///
    /// Objects and chunks younger than `cutoff` stay whatever references them: an upload under
    /// way has chunks but no manifest yet, and a manifest may arrive before the row naming it.
    func collectObjects(before cutoff: Int64) async throws -> ObjectCollection

    func close() throws
}

extension CloudStore {
    public func requireReachable() throws(DallyError) {}

    /// Every change of `table` after `since`: no scope, not resyncing.
    public func changes(table: String, since: Int64, limit: Int, excludingReplica: String?) async throws -> ChangePage {
        try await changes(
            table: table, since: since, limit: limit, excludingReplica: excludingReplica, scope: nil, resyncing: false)
    }

    /// The changes of `table` after `since` within `scope`, for a reader not pulling from scratch.
    public func changes(
        table: String, since: Int64, limit: Int, excludingReplica: String?, scope: TypedScope?
    ) async throws -> ChangePage {
        try await changes(
            table: table, since: since, limit: limit, excludingReplica: excludingReplica, scope: scope, resyncing: false)
    }

    /// Every change of `table` after `since` for a reader that may be pulling from scratch.
    public func changes(
        table: String, since: Int64, limit: Int, excludingReplica: String?, resyncing: Bool
    ) async throws -> ChangePage {
        try await changes(
            table: table, since: since, limit: limit, excludingReplica: excludingReplica, scope: nil, resyncing: resyncing)
    }

    /// Whether `table` has any change after `since`: no scope.
    public func hasChanges(table: String, since: Int64, excludingReplica: String?) async throws -> Bool {
        try await hasChanges(table: table, since: since, excludingReplica: excludingReplica, scope: nil)
    }
}

public struct CloudStoreStatistics: Sendable {
    public struct Table: Sendable {
        public var version: Int64
        public var live: Int64
        public var tombstones: Int64
        /// The highest version of a purged tombstone.
        public var horizon: Int64

        public init(version: Int64, live: Int64, tombstones: Int64, horizon: Int64 = 0) {
            self.horizon = horizon
            self.version = version
            self.live = live
            self.tombstones = tombstones
        }
    }

    public var tables: [String: Table]
    public var storedAnswers: Int64
    /// The row database's bytes (the chunk store's are in ``ChunkStore/totals()``).
    public var bytesOnDisk: Int64
    /// Objects held complete.
    public var objects: Int64

    public init(tables: [String: Table], storedAnswers: Int64, bytesOnDisk: Int64, objects: Int64 = 0) {
        self.tables = tables
        self.storedAnswers = storedAnswers
        self.bytesOnDisk = bytesOnDisk
        self.objects = objects
    }
}

/// FNV-1a, 64 bits: a cheap fingerprint of a batch body, to recognise a retry.
public enum Fingerprint {
    public static func of(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return hash
    }

    public static func of(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBytes { of($0) }
    }
}
