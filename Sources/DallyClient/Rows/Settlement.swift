/// How to settle an open conflict.
///
/// For example: `try await client.settle(table: "docs", id: "d1", .write(["text": "merged"]))`.
public enum Settlement: Sendable {
    /// Send the local row again, based on the cloud's version (for an error: after fixing its cause).
    case takeLocal
    /// Replace the local row with the cloud's (conflicts only).
    case takeServer
    /// Write this merged row (as a PUT) and send it.
    case write(any Encodable & Sendable)
}
