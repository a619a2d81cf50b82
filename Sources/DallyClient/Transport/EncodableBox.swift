/// Any encodable value, so that one batch holds full rows and partial ones of other types.
struct EncodableBox: Encodable, Sendable {
    private let value: any Encodable & Sendable

    init(_ value: some Encodable & Sendable) { self.value = value }

    func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
}
