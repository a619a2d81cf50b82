extension SystemConfig {
    /// One `[[tables]]` entry, declared the same on the cloud and on every gateway.
    public struct Table: Sendable {
        public var name: String
        public var columns: [String]
        /// `last_writer_wins`, `server_wins`, `client_wins` or `manual`; nil keeps the default.
        public var conflict: String?
        public var localOnly: Bool
        public var atomicSync: Bool
        /// Policies as TOML inline tables, e.g. `{ max_delay = "2m", networks = ["wifi"] }`.
        public var upload: String?
        public var download: String?
        public var uploadObjects: String?
        public var downloadObjects: String?
        /// Further keys as TOML lines, e.g. `tombstone_ttl = "1d"`.
        public var extra: [String]
        /// A gateway's scope as a TOML inline table, e.g. `{ store_id = "S1" }`.
        public var scope: String?
        /// `accept` or `reject`; nil keeps the default.
        public var scopeWrites: String?
        /// The cloud's scope columns.
        public var scopeColumns: [String] = []

        public init(
            _ name: String, columns: [String], conflict: String? = nil, localOnly: Bool = false,
            atomicSync: Bool = false, upload: String? = nil, download: String? = nil, uploadObjects: String? = nil,
            downloadObjects: String? = nil, extra: [String] = []
        ) {
            self.extra = extra
            self.name = name
            self.columns = columns
            self.conflict = conflict
            self.localOnly = localOnly
            self.atomicSync = atomicSync
            self.upload = upload
            self.download = download
            self.uploadObjects = uploadObjects
            self.downloadObjects = downloadObjects
        }

        var toml: String {
            var lines = ["[[tables]]", "name = \(TOMLText.string(name))", "columns = \(TOMLText.array(columns))"]
            if let conflict { lines.append("conflict = \(TOMLText.string(conflict))") }
            if localOnly { lines.append("local_only = true") }
            if atomicSync { lines.append("atomic_sync = true") }
            if let upload { lines.append("upload = \(upload)") }
            if let uploadObjects { lines.append("upload_objects = \(uploadObjects)") }
            if let download { lines.append("download = \(download)") }
            if let downloadObjects { lines.append("download_objects = \(downloadObjects)") }
            if let scope { lines.append("scope = \(scope)") }
            if let scopeWrites { lines.append("scope_writes = \(TOMLText.string(scopeWrites))") }
            if !scopeColumns.isEmpty { lines.append("scope_columns = \(TOMLText.array(scopeColumns))") }
            lines += extra
            return lines.joined(separator: "\n")
        }
    }
}
