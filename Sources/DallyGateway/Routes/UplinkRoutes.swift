import DallyCore
import DallyHTTP
import DallyScheduler
import DallySyncEngine
import Hummingbird

/// `GET /v1/admin/uplinks` and `PUT /v1/admin/uplinks/{name}` (admin token): the uplinks'
/// state, and the availability override for boxes whose OS knows better than the probe (a
/// network-manager hook can call it when an interface comes or goes).
struct UplinkRoutes: Sendable {
    let authorizer: Authorizer
    let syncer: (any SyncControl)?

    func register(on router: Router<DallyRequestContext>) {
        router.get("/v1/admin/uplinks") { request, _ in
            try authorizer.requireAdmin(request)
            _ = try QueryParameters(request, allowed: [])
            return try JSONResponse.encoded(["uplinks": try requireSyncer().uplinkSnapshots])
        }
        router.put("/v1/admin/uplinks/:name") { request, context in
            try authorizer.requireAdmin(request)
            _ = try QueryParameters(request, allowed: [])
            let syncer = try requireSyncer()
            let name = context.parameters.decoded("name")
            let bytes = try await BodyCoding.body(of: request, maxBytes: 4096, maxDecompressedBytes: 4096)
            let mode = try Self.mode(try BodyCoding.json(bytes))
            return try JSONResponse.encoded(try syncer.setAvailability(uplink: name, to: mode))
        }
    }

    private func requireSyncer() throws(DallyError) -> any SyncControl {
        guard let syncer else {
            throw DallyError(.syncDisabled, "this gateway has no [cloud] section in its configuration, so no uplinks")
        }
        return syncer
    }

    /// `{"availability": "available" | "unavailable" | "auto"}`.
    static func mode(_ body: JSONValue) throws(DallyError) -> AvailabilityOverride {
        let choices = AvailabilityOverride.allCases.map(\.rawValue).joined(separator: ", ")
        guard case .object(let members) = body else {
            throw DallyError(.badRequest, "expected {\"availability\": one of \(choices)}")
        }
        for member in members where member.key != "availability" {
            throw DallyError(.badRequest, "unknown field '\(member.key)'", field: member.key)
        }
        guard case .string(let text) = body["availability"] else {
            throw DallyError(.badRequest, "missing \"availability\": one of \(choices)", field: "availability")
        }
        guard let mode = AvailabilityOverride(rawValue: text) else {
            throw DallyError(.badRequest, "availability '\(text)': use one of \(choices)", field: "availability")
        }
        return mode
    }
}
