/// `{"take":"local"}`, `{"take":"server"}` or `{"values":{…}}`.
struct SettlementBody: Encodable {
    let settlement: Settlement

    private enum CodingKeys: String, CodingKey { case take, values }

    func encode(to encoder: any Encoder) throws {
        var object = encoder.container(keyedBy: CodingKeys.self)
        switch settlement {
        case .takeLocal: try object.encode("local", forKey: .take)
        case .takeServer: try object.encode("server", forKey: .take)
        case .write(let values): try object.encode(EncodableBox(values), forKey: .values)
        }
    }
}
