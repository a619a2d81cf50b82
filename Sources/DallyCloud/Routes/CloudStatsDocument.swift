import DallyCore
import DallyHTTP
import DallySync

/// The cloud's `/stats` document: `{"uptime_seconds", "tables": {name: {version, live,
/// tombstones}}, "batches": {…}, "dictionaries": {…}, "objects": {…}, "notify": {waiting,
/// limit}, "store": {bytes, stored_answers}, "requests": […]}`. Every group is a list of named
/// counts; members come out sorted (``DocumentEncoder``).
struct CloudStatsDocument: Encodable {
    typealias Counts = [(String, Int64)]

    let uptimeSeconds: Int64
    /// By table name, sorted.
    let tables: [(String, Counts)]
    /// By gateway id, sorted, every configured one: how long since it last pulled (null: never
    /// seen), per table how many versions it is behind the cloud (as of its last pull), and how
    /// the tables it told it declares differ from this node's.
    let gateways: [(String, Gateway)]
    let batches: Counts
    let dictionaries: Counts
    let objects: Counts
    let notify: Counts
    let store: Counts
    let requests: [RequestCount]

    struct Gateway {
        /// Nil for a configured gateway never seen (no pull, no telling).
        var lastSeenSecondsAgo: Int64?
        var lag: Counts
        var declaration: Declaration?
    }

    /// What a gateway last told it declares, against this node's declarations.
    struct Declaration {
        var toldSecondsAgo: Int64
        /// The gateway's Dally version, as it told.
        var version: String?
        /// Per table that differs: each difference's code and the columns it names
        /// (``ToldDeclarations/differences(from:)``).
        var differences: FleetDeclarations.Differences
    }

    func encode(to encoder: any Encoder) throws {
        var object = encoder.container(keyedBy: CodingName.self)
        try object.encode(uptimeSeconds, for: "uptime_seconds")
        var tableObject = object.nestedContainer(keyedBy: CodingName.self, forKey: CodingName("tables"))
        for (name, counts) in tables { try tableObject.encode(entries: counts, for: name) }
        var gatewayObject = object.nestedContainer(keyedBy: CodingName.self, forKey: CodingName("gateways"))
        for (name, gateway) in gateways {
            var one = gatewayObject.nestedContainer(keyedBy: CodingName.self, forKey: CodingName(name))
            try one.encode(gateway.lastSeenSecondsAgo, for: "last_seen_seconds_ago")
            try one.encode(entries: gateway.lag, for: "cursor_lag")
            if let declaration = gateway.declaration {
                var told = one.nestedContainer(keyedBy: CodingName.self, forKey: CodingName("declaration"))
                try told.encode(declaration.toldSecondsAgo, for: "told_seconds_ago")
                if let version = declaration.version { try told.encode(version, for: "version") }
                try told.encode(declaration.differences, for: "differences")
            }
        }
        try object.encode(entries: batches, for: "batches")
        try object.encode(entries: dictionaries, for: "dictionaries")
        try object.encode(entries: objects, for: "objects")
        try object.encode(entries: notify, for: "notify")
        try object.encode(entries: store, for: "store")
        try object.encode(requests, for: "requests")
    }
}

extension CloudStatsDocument.Gateway {
    /// Each gateway's sighting, from its cursors: the most recent pull of any table, and per
    /// table the versions it is behind `versions` (a table missing there: none); and from
    /// `told`, how what it declares differs from this node's. A gateway that told but has not
    /// pulled yet was last seen telling; one of `configured` neither pulled nor told is listed,
    /// never seen.
    static func folded(
        _ cursors: [GatewayCursor], told: [FleetDeclarations.Entry] = [], configured: [String] = [],
        versions: [String: Int64], at now: Int64
    ) -> [(String, CloudStatsDocument.Gateway)] {
        var gateways: [String: CloudStatsDocument.Gateway] = [:]
        for cursor in cursors {
            var gateway = gateways[cursor.gateway] ?? .init(lastSeenSecondsAgo: nil, lag: [])
            let secondsAgo = max(0, now - cursor.seenAt) / 1000
            gateway.lastSeenSecondsAgo = min(gateway.lastSeenSecondsAgo ?? secondsAgo, secondsAgo)
            gateway.lag.append((cursor.table, max(0, (versions[cursor.table] ?? cursor.version) - cursor.version)))
            gateways[cursor.gateway] = gateway
        }
        for one in told {
            let secondsAgo = max(0, now - one.toldAt) / 1000
            var gateway = gateways[one.gateway] ?? .init(lastSeenSecondsAgo: secondsAgo, lag: [])
            gateway.declaration = .init(toldSecondsAgo: secondsAgo, version: one.version, differences: one.differences)
            gateways[one.gateway] = gateway
        }
        // A site configured but never seen: installed and not yet connected, or misconfigured.
        for id in configured where gateways[id] == nil {
            gateways[id] = .init(lastSeenSecondsAgo: nil, lag: [])
        }
        return gateways.sorted { $0.key < $1.key }
    }
}
