import DallySync
import Synchronization

/// What each gateway of the fleet last told this cloud it declares (`POST /v1/tables`), and how
/// it differs from this node's declarations (``ToldDeclarations/differences(from:)``), for
/// `/stats` and `/metrics`.
///
/// The documents live in the store (one per gateway, shared by every node on one database);
/// each is read and compared once per telling, not at every scrape: a scrape of a fleet's
/// hundreds of gateways costs one read of their rows.
///
/// ```swift
/// let fleet = FleetDeclarations(store: store, declared: TableDeclarations(schemas: config.tables))
/// try await fleet.record(ToldDeclarations(gateway: "shop-12", declared: theirs, toldAt: now))
/// try await fleet.all()   // [shop-12: told at …, version 0.9.0, ["orders": ["columns_not_declared": ["note"]]]]
/// ```
final class FleetDeclarations: Sendable {
    /// Per table that differs: each difference's code and the columns it names.
    typealias Differences = [String: [String: [String]]]

    struct Entry: Sendable {
        let gateway: String
        let toldAt: Int64
        /// The gateway's Dally version, as it told (nil from one that predates telling it).
        let version: String?
        let differences: Differences
    }

    let store: any CloudStore
    /// This node's declarations, which gateways' are compared with.
    let declared: TableDeclarations
    /// By gateway, the differences of the telling last compared.
    private let compared = Mutex<[String: Entry]>([:])

    init(store: any CloudStore, declared: TableDeclarations) {
        self.store = store
        self.declared = declared
    }

    /// Keeps `told`; returns its differences, and those of the gateway's telling before as
    /// this node last compared it (nil when it has not, since it started).
    func record(_ told: ToldDeclarations) async throws -> (before: Differences?, now: Differences) {
        let before = compared.withLock { $0[told.gateway]?.differences }
        try await store.recordDeclarations(
            ToldDocument(gateway: told.gateway, document: try told.declared.encoded(), toldAt: told.toldAt))
        let differences = told.differences(from: declared)
        compared.withLock {
            $0[told.gateway] = Entry(
                gateway: told.gateway, toldAt: told.toldAt, version: told.declared.version, differences: differences)
        }
        return (before, differences)
    }

    /// Every gateway that told, sorted by id. A document this version cannot read is left out
    /// (shown as none) rather than failing the scrape.
    func all() async throws -> [Entry] {
        try await store.toldDeclarations().compactMap { told in
            if let known = compared.withLock({ $0[told.gateway] }), known.toldAt == told.toldAt { return known }
            guard let declared = try? TableDeclarations(document: told.document) else { return nil }
            let entry = Entry(
                gateway: told.gateway, toldAt: told.toldAt, version: declared.version,
                differences: ToldDeclarations(gateway: told.gateway, declared: declared, toldAt: told.toldAt)
                    .differences(from: self.declared))
            compared.withLock { $0[told.gateway] = entry }
            return entry
        }
    }
}
