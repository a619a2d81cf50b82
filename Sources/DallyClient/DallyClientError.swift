import DallyCore

/// Everything ``DallyClient`` throws, besides `CancellationError`.
///
/// A refusal by the gateway carries its stable code (the same table as docs/API.md), the HTTP
/// status, the message and the field at fault; a `409 version_mismatch` comes as its own case
/// with the row as it is now, so a write can be merged and retried.
///
/// For example:
/// ```swift
/// do {
///     try await orders.put(id: "o1", order, expectedSeq: seen.seq)
/// } catch DallyClientError.versionMismatch(let current) {
///     // someone wrote o1 since: merge with `current` and try again
/// } catch let error as DallyClientError where error.code == .wrongType {
///     print("bad value for \(error.field ?? "?"): \(error.message)")
/// }
/// ```
public enum DallyClientError: Error, Sendable, CustomStringConvertible {
    /// The gateway answered with an error document.
    case gateway(GatewayRefusal)
    /// `409 version_mismatch`: the row changed since the `seq` the write expected (or exists,
    /// for a create-only write). `current` is the row as it is now (nil if the gateway sent none).
    case versionMismatch(current: Row<JSONValue>?)
    /// No answer: the gateway could not be reached, or the connection broke.
    case unreachable(String)
    /// An answer the library cannot read (not the documented shape).
    case invalidAnswer(String)
    /// A downloaded object whose SHA-256 is not the one the gateway named; the bytes written
    /// are not to be trusted.
    case hashMismatch(expected: String, received: String)
    /// An answer body over the size the library reads into memory.
    case responseTooLarge(limit: Int)
    /// A local file to upload from or download to could not be read or written.
    case fileError(String)

    /// The gateway's stable code: nil when the error is not the gateway's answer (unreachable,
    /// unreadable answer, a download that did not match its hash).
    public var code: DallyError.Code? {
        switch self {
        case .gateway(let refusal): refusal.code
        case .versionMismatch: .versionMismatch
        default: nil
        }
    }

    /// The HTTP status of the gateway's answer, when there was one.
    public var status: Int? {
        switch self {
        case .gateway(let refusal): refusal.status
        case .versionMismatch: 409
        default: nil
        }
    }

    /// What went wrong, for a person.
    public var message: String {
        switch self {
        case .gateway(let refusal): refusal.message
        case .versionMismatch(let current):
            "the row changed since the version the write expected (now seq \(current.map { String($0.seq) } ?? "unknown"))"
        case .unreachable(let reason): "gateway unreachable: \(reason)"
        case .invalidAnswer(let reason): "unreadable answer from the gateway: \(reason)"
        case .hashMismatch(let expected, let received):
            "the object's bytes hash to \(received), not \(expected)"
        case .responseTooLarge(let limit): "answer larger than \(limit) bytes"
        case .fileError(let reason): reason
        }
    }

    /// The column, parameter or key at fault, when the gateway named one.
    public var field: String? {
        if case .gateway(let refusal) = self { refusal.field } else { nil }
    }

    public var description: String {
        switch self {
        case .gateway(let refusal): refusal.description
        case .versionMismatch: "version_mismatch (409): \(message)"
        default: message
        }
    }
}
