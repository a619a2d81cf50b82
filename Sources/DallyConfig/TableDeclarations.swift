import DallyCore

/// Reads `[[tables]]` declarations into ``TableSchema`` values. Shared by the gateway and the
/// cloud so that both sides agree on every table's shape.
///
/// ```toml
/// [[tables]]
/// name = "orders"
/// columns = ["customer TEXT", "total REAL", "paid BOOLEAN", "items JSON"]
/// conflict = "last_writer_wins"
/// upload = { max_delay = "2m", networks = ["wired", "wifi", "cellular"] }
/// ```
enum TableDeclarations {
    static let keys = [
        "name", "columns", "conflict", "local_only", "atomic_sync",
        "upload", "upload_objects", "download", "download_objects",
        "tombstone_ttl", "retain", "max_pending", "max_pending_bytes", "on_full",
        "scope", "scope_writes", "scope_columns",
    ]

    /// Defaults for a table that does not say otherwise.
    static let defaultUploadDelay: Duration = .seconds(60)
    static let defaultObjectUploadDelay: Duration = .seconds(600)
    static let defaultDownloadPeriod: Duration = .seconds(60)
    static let defaultObjectDownloadPeriod: Duration = .seconds(600)
    /// The most columns one table may declare.
    static let maxColumns = 200

    /// Reads every `[[tables]]` block of `root`.
    ///
    /// `networkClasses` are the classes a policy may name, and what an unnamed `networks`
    /// defaults to. nil (the cloud, which has no `[network]` section) accepts any valid class
    /// name, so that a gateway's blocks can be pasted as they are, and defaults to
    /// ``GatewayConfig/defaultNetworkClasses``, so that such blocks read the same on both sides.
    static func read(_ root: TOMLSection, networkClasses: [String]?) throws(KeyError) -> [TableSchema] {
        var tables: [TableSchema] = []
        var names: Set<String> = []
        for section in try root.sections("tables") {
            let table = try readTable(section, networkClasses: networkClasses)
            guard names.insert(table.name.lowercased()).inserted else {
                throw KeyError(key: section.keyPath("name"), reason: "duplicate table '\(table.name)'")
            }
            tables.append(table)
        }
        return tables
    }

    static func readTable(_ section: TOMLSection, networkClasses: [String]?) throws(KeyError) -> TableSchema {
        try section.refuseUnknownKeys(keys)
        guard let name = try section.string("name") else {
            throw KeyError(key: section.keyPath("name"), reason: "missing: every table needs a name")
        }
        guard Identifier.isValidName(name) else {
            throw KeyError(
                key: section.keyPath("name"),
                reason: "bad table name '\(name)': use a letter or _, then letters, digits or _ (at most 63)"
            )
        }
        let columns = try readColumns(section)
        let conflictText = try section.string("conflict", default: ConflictPolicy.lastWriterWins.rawValue)
        guard let conflict = ConflictPolicy(rawValue: conflictText) else {
            throw KeyError(
                key: section.keyPath("conflict"),
                reason: "unknown conflict policy '\(conflictText)'; use one of "
                    + ConflictPolicy.allCases.map(\.rawValue).joined(separator: ", ")
            )
        }
        let policy = SyncPolicy(
            localOnly: try section.bool("local_only", default: false),
            atomicSync: try section.bool("atomic_sync", default: false),
            uploadRows: try readUpload(section, "upload", defaultDelay: defaultUploadDelay, classes: networkClasses),
            uploadObjects: try readUpload(
                section, "upload_objects", defaultDelay: defaultObjectUploadDelay, classes: networkClasses),
            downloadRows: try readDownload(
                section, "download", defaultPeriod: defaultDownloadPeriod, classes: networkClasses, objects: false),
            downloadObjects: try readDownload(
                section, "download_objects", defaultPeriod: defaultObjectDownloadPeriod, classes: networkClasses,
                objects: true)
        )
        let plain = TableSchema(name: name, columns: columns, conflict: conflict, policy: policy)
        let scope = try ScopeDeclaration.readScope(section, schema: plain)
        // A gateway's block pasted into the cloud as it is makes its scope's columns scope
        // columns there: the cloud then keeps what that gateway's pages need.
        var scopeColumns = try ScopeDeclaration.readColumns(section, schema: plain)
        for column in scope?.columns ?? [] where !scopeColumns.contains(column) { scopeColumns.append(column) }
        return TableSchema(
            name: name, columns: columns, conflict: conflict, policy: policy, lifecycle: try readLifecycle(section),
            scope: scope, scopeWrites: try ScopeDeclaration.readWrites(section), scopeColumns: scopeColumns)
    }

    /// `tombstone_ttl`, `retain`, `max_pending` (rows), `max_pending_bytes` and `on_full`.
    static func readLifecycle(_ section: TOMLSection) throws(KeyError) -> TableLifecycle {
        var lifecycle = TableLifecycle()
        lifecycle.tombstoneTTL = try section.duration(
            "tombstone_ttl", default: TableLifecycle.defaultTombstoneTTL, minimum: .seconds(1))
        if section.has("retain") {
            lifecycle.retain = try section.duration("retain", default: .zero, minimum: .seconds(1))
        }
        if section.has("max_pending") {
            lifecycle.maxPendingRows = Int64(try section.int("max_pending", default: 0, range: 1...(1 << 40)))
        }
        if section.has("max_pending_bytes") {
            lifecycle.maxPendingBytes = Int64(try section.int("max_pending_bytes", default: 0, range: 1024...(1 << 50)))
        }
        let onFull = try section.string("on_full", default: TableLifecycle.OnFull.reject.rawValue)
        guard let policy = TableLifecycle.OnFull(rawValue: onFull) else {
            throw KeyError(
                key: section.keyPath("on_full"),
                reason: "unknown policy '\(onFull)'; use one of "
                    + TableLifecycle.OnFull.allCases.map(\.rawValue).joined(separator: ", "))
        }
        lifecycle.onFull = policy
        return lifecycle
    }

    static func readColumns(_ section: TOMLSection) throws(KeyError) -> [Column] {
        guard let declared = try section.stringArray("columns") else {
            throw KeyError(key: section.keyPath("columns"), reason: "missing: declare columns as [\"name TYPE\", …]")
        }
        guard declared.count <= maxColumns else {
            throw KeyError(key: section.keyPath("columns"), reason: "at most \(maxColumns) columns per table")
        }
        var columns: [Column] = []
        for (i, text) in declared.enumerated() {
            let key = "\(section.keyPath("columns"))[\(i)]"
            let parts = text.split(separator: " ", omittingEmptySubsequences: true)
            guard parts.count == 2 else {
                throw KeyError(key: key, reason: "expected \"name TYPE\", got \"\(text)\"")
            }
            let name = String(parts[0])
            guard Identifier.isValidName(name) else {
                throw KeyError(key: key, reason: "bad column name '\(name)': use a letter or _, then letters, digits or _")
            }
            guard !Identifier.reservedColumnNames.contains(name.lowercased()) else {
                throw KeyError(key: key, reason: "column name '\(name)' is reserved for row metadata")
            }
            guard let type = ColumnType(declared: String(parts[1])) else {
                throw KeyError(
                    key: key,
                    reason: "unknown column type '\(parts[1])'; use one of "
                        + ColumnType.allCases.map(\.rawValue).joined(separator: ", ")
                )
            }
            guard !columns.contains(where: { $0.name.lowercased() == name.lowercased() }) else {
                throw KeyError(key: key, reason: "duplicate column '\(name)'")
            }
            columns.append(Column(name: name, type: type))
        }
        return columns
    }

    /// The networks a policy gets when it names none.
    static func defaultNetworks(_ classes: [String]?) -> [String] { classes ?? GatewayConfig.defaultNetworkClasses }

    /// Reads the network classes listed under `key` (an array of class names), each one of
    /// `classes` when those are known; ``defaultNetworks(_:)`` when the key is absent.
    static func readNetworks(
        _ section: TOMLSection, _ key: String = "networks", classes: [String]?
    ) throws(KeyError) -> [String] {
        guard let networks = try section.stringArray(key) else { return defaultNetworks(classes) }
        for (i, network) in networks.enumerated() {
            let elementKey = "\(section.keyPath(key))[\(i)]"
            if let classes, !classes.contains(network) {
                throw KeyError(
                    key: elementKey,
                    reason: "unknown network class '\(network)'; declared classes: \(classes.joined(separator: ", "))"
                )
            }
            guard Identifier.isValidName(network) else {
                throw KeyError(key: elementKey, reason: "bad network class name '\(network)'")
            }
        }
        return networks
    }

    static func readUpload(
        _ table: TOMLSection, _ key: String, defaultDelay: Duration, classes: [String]?
    ) throws(KeyError) -> UploadPolicy {
        guard let section = try table.section(key) else {
            return UploadPolicy(maxDelay: defaultDelay, networks: defaultNetworks(classes))
        }
        try section.refuseUnknownKeys(["max_delay", "networks"])
        return UploadPolicy(
            maxDelay: try section.duration("max_delay", default: defaultDelay),
            networks: try readNetworks(section, classes: classes)
        )
    }

    static func readDownload(
        _ table: TOMLSection, _ key: String, defaultPeriod: Duration, classes: [String]?, objects: Bool
    ) throws(KeyError) -> DownloadPolicy {
        guard let section = try table.section(key) else {
            return DownloadPolicy(period: defaultPeriod, networks: defaultNetworks(classes))
        }
        try section.refuseUnknownKeys(objects ? ["period", "networks", "on_demand"] : ["period", "networks"])
        return DownloadPolicy(
            period: try section.duration("period", default: defaultPeriod, minimum: .seconds(1)),
            networks: try readNetworks(section, classes: classes),
            onDemand: objects ? try section.bool("on_demand", default: false) : false
        )
    }
}
