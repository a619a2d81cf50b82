import DallyCore
import DallyHTTP
import DallySyncEngine

/// The `/stats` document (API.md lists every member): uptime, the store and its writer, the
/// long-poll waiters, open files, sync (null without a cloud), uplinks, tables, objects and
/// requests.
struct StatsDocument: Encodable {
    let uptimeSeconds: Int64
    let storeBytes: Int64
    /// `store.max_bytes`; nil when local writes have no size bound.
    let storeMaxBytes: Int64?
    let lastSeq: Int64
    let writer: WriterStats
    let waiters: (current: Int, limit: Int)
    let openFiles: OpenFileLimit
    let sync: SyncStats?
    let uplinks: [UplinkSnapshot]
    let tables: [(String, TableStats)]
    let objects: ObjectStats
    let requests: [RequestCount]

    func encode(to encoder: any Encoder) throws {
        var object = encoder.container(keyedBy: CodingName.self)
        try object.encode(uptimeSeconds, for: "uptime_s")
        var store = object.nestedContainer(keyedBy: CodingName.self, forKey: CodingName("store"))
        try store.encode(storeBytes, for: "bytes")
        try store.encode(storeMaxBytes, for: "max_bytes")
        try store.encode(lastSeq, for: "last_seq")
        try store.encode(writer, for: "writer")
        try object.encode(entries: [("current", waiters.current), ("limit", waiters.limit)], for: "waiters")
        try object.encode(entries: [("soft", openFiles.soft), ("hard", openFiles.hard)], for: "open_files")
        try object.encode(sync, for: "sync")
        try object.encode(uplinks, for: "uplinks")
        try object.encode(entries: tables, for: "tables")
        try object.encode(objects, for: "objects")
        try object.encode(requests, for: "requests")
    }
}
