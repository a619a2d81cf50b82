/// A partial write of `orders`.
struct Payment: Encodable, Sendable {
    var paid: Bool
}
