/// What a cloud store keeps of a gateway's telling (`POST /v1/tables`): the gateway's
/// declarations as the JSON document ``TableDeclarations/encoded()`` writes, and when.
/// Stores keep the bytes; the cloud reads them (``ToldDeclarations``) once per telling.
public struct ToldDocument: Sendable, Equatable {
    public let gateway: String
    public let document: [UInt8]
    /// Milliseconds since 1970.
    public let toldAt: Int64

    public init(gateway: String, document: [UInt8], toldAt: Int64) {
        self.gateway = gateway
        self.document = document
        self.toldAt = toldAt
    }
}
