import DallyCore

/// The gateway's error document: `{"error":{"code","message","field"},"current":{…}}`.
struct ErrorAnswer: Decodable {
    struct Body: Decodable {
        let code: String
        let message: String
        let field: String?
    }

    let error: Body
    /// The row as it is now, with `version_mismatch`.
    let current: Row<JSONValue>?

    /// The error a non-2xx answer stands for: the gateway's document when it sent one, else
    /// the status alone (a proxy's page, an empty body).
    static func error(status: Int, body: [UInt8], retryAfter: String?) -> DallyClientError {
        guard let answer = try? JSONCoding.decode(ErrorAnswer.self, from: body, what: "error") else {
            let text = String(decoding: body.prefix(200), as: UTF8.self)
            return .gateway(GatewayRefusal(status: status, codeName: "http_\(status)", message: text, field: nil))
        }
        if answer.error.code == DallyError.Code.versionMismatch.rawValue {
            return .versionMismatch(current: answer.current)
        }
        return .gateway(
            GatewayRefusal(
                status: status, codeName: answer.error.code, message: answer.error.message, field: answer.error.field,
                retryAfter: retryAfter.flatMap { Int($0) }))
    }
}
