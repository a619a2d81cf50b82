/// The gateway's answer to a batch: the ids saved, the rows refused and why, and the highest
/// sequence number written.
///
/// For example:
/// ```swift
/// let result = try await orders.batch(batch)
/// if result.errors.isEmpty { print("all \(result.saved.count) saved up to seq \(result.seq)") }
/// for refusal in result.errors where refusal.code == .wrongType { print(refusal.field ?? "", refusal.message) }
/// ```
public struct BatchResult: Codable, Sendable, Equatable {
    /// The ids written, in the order the writes were applied (an id written twice shows twice).
    public let saved: [String]
    /// The rows refused; with `allOrNothing`, non-empty means nothing was saved.
    public let errors: [RowRefusal]
    /// The highest local sequence number the batch wrote.
    public let seq: Int64
}

/// One row of a batch the gateway refused.
///
/// For example: `RowRefusal(id: "o4", codeName: "wrong_type", field: "total", message: "column 'total' expects REAL …")`.
public struct RowRefusal: Codable, Sendable, Equatable {
    /// The entry's id (nil when the entry had none).
    public let id: String?
    /// The stable code as sent.
    public let codeName: String
    /// The column at fault, if one.
    public let field: String?
    public let message: String

    /// The code, nil for one newer than this library.
    public var code: DallyErrorCode? { DallyErrorCode(rawValue: codeName) }

    public init(id: String?, codeName: String, field: String?, message: String) {
        self.id = id
        self.codeName = codeName
        self.field = field
        self.message = message
    }

    private enum CodingKeys: String, CodingKey {
        case id, field, message
        case codeName = "code"
    }
}
