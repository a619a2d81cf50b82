/// Holds another sequence's iterator so a closure can advance it. Only one reader touches it
/// (a stream is read by one iterator), hence `@unchecked Sendable`.
final class IteratorBox<Base: AsyncIteratorProtocol>: @unchecked Sendable where Base.Element == [UInt8] {
    private var base: Base

    init(_ base: Base) { self.base = base }

    func next() async throws -> [UInt8]? { try await base.next() }
}
