/// One transfer that completed, as the link model learns from it: body bytes each way, when
/// the answer's head came and when its body ended, from the request's start, and how many
/// bodies shared the link with its own.
struct TransferSample: Sendable, Equatable {
    var bytesUp: Int
    var bytesDown: Int
    var headAfter: Duration
    var totalAfter: Duration
    /// The mean number of bodies going up the link while this one went, itself included.
    var sharing: Double = 1
}
