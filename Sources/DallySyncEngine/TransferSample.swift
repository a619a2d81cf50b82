/// One transfer that completed, as the link model learns from it: body bytes each way, when
/// the answer's head came and when its body ended, from the request's start.
struct TransferSample: Sendable, Equatable {
    var bytesUp: Int
    var bytesDown: Int
    var headAfter: Duration
    var totalAfter: Duration
}
