/// Stops an object walk between chunks because rows are due on another uplink.
struct WalkPause: Error {
    let uplink: String

    init(for uplink: String) { self.uplink = uplink }
}
