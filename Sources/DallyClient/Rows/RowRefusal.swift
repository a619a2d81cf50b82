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
    /// Why, for a person.
    public let message: String

    /// The code, nil for one newer than this library.
    public var code: DallyErrorCode? { DallyErrorCode(rawValue: codeName) }

    /// A refusal as the gateway sends it (for tests and transports that make answers).
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
