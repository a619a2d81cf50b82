/// `[objects]`: limits and housekeeping for large objects, on the gateway and in the cloud.
public struct ObjectSettings: Sendable, Equatable {
    /// The largest object accepted, in bytes; a larger upload is refused with 413 as soon as it
    /// passes this many bytes (`max_bytes`, default 4 GiB).
    public var maxBytes: Int64 = 4 << 30
    /// How long a client's read of an object not yet on this gateway waits for the fetch from
    /// the cloud before it is answered `504 object_fetch_timeout` (`fetch_timeout`; gateway only).
    public var fetchTimeout: Duration = .seconds(30)
    /// How long chunks and objects that no row references are kept before they are deleted
    /// (`gc_grace`): an upload under way, or one a row write is about to name, is younger.
    public var gcGrace: Duration = .seconds(3600)
    /// How often the sweep runs (`gc_interval`).
    public var gcInterval: Duration = .seconds(600)

    public init() {}

    /// Reads `[objects]`; `gateway` allows `fetch_timeout`.
    static func read(_ root: TOMLSection, gateway: Bool) throws(KeyError) -> ObjectSettings {
        var settings = ObjectSettings()
        guard let section = try root.section("objects") else { return settings }
        try section.refuseUnknownKeys(
            gateway ? ["max_bytes", "fetch_timeout", "gc_grace", "gc_interval"] : ["max_bytes", "gc_grace", "gc_interval"])
        settings.maxBytes = Int64(try section.int("max_bytes", default: Int(settings.maxBytes), range: 1...(1 << 42)))
        if gateway {
            settings.fetchTimeout = try section.duration(
                "fetch_timeout", default: settings.fetchTimeout, minimum: .milliseconds(100), maximum: .seconds(3600))
        }
        settings.gcGrace = try section.duration("gc_grace", default: settings.gcGrace, minimum: .seconds(1))
        settings.gcInterval = try section.duration("gc_interval", default: settings.gcInterval, minimum: .seconds(1))
        return settings
    }
}
