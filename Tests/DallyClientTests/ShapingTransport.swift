import DallyClient
import Synchronization

/// A transport in front of the real one that records the requests it carries and can cut or
/// corrupt the body of the next object download: how a test sees a Wi-Fi drop or a bad byte.
final class ShapingTransport: DallyTransport {
    enum Fault: Sendable {
        /// The body breaks after this many bytes, as a dropped connection does.
        case cutAfter(Int)
        /// One byte of the body is flipped.
        case flipByte(Int)
    }

    private let inner: HTTPClientTransport
    private let state = Mutex<(requests: [TransportRequest], fault: Fault?)>(([], nil))

    init() { inner = HTTPClientTransport() }

    /// The requests carried so far.
    var requests: [TransportRequest] { state.withLock { $0.requests } }

    /// Applies `fault` to the body of the next answer that carries object bytes.
    func inject(_ fault: Fault) { state.withLock { $0.fault = fault } }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        state.withLock { $0.requests.append(request) }
        let response = try await inner.send(request)
        let isObject = response.header("Content-Type") == "application/octet-stream"
        guard isObject, let fault = state.withLock({ state in defer { state.fault = nil }; return state.fault }) else {
            return response
        }
        let body = response.body
        let shaped = ByteStream {
            let reader = FaultyReader(body.makeAsyncIterator(), fault: fault)
            return { try await reader.next() }
        }
        return TransportResponse(status: response.status, headers: response.headers, body: shaped)
    }

    func shutdown() async throws { try await inner.shutdown() }
}

/// Reads a body and applies a fault to it. One reader only.
private final class FaultyReader: @unchecked Sendable {
    private var base: ByteStream.Iterator
    private let fault: ShapingTransport.Fault
    private var offset = 0

    init(_ base: ByteStream.Iterator, fault: ShapingTransport.Fault) {
        self.base = base
        self.fault = fault
    }

    func next() async throws -> [UInt8]? {
        guard var piece = try await base.next() else { return nil }
        defer { offset += piece.count }
        switch fault {
        case .cutAfter(let limit):
            if offset >= limit { throw DallyClientError.unreachable("connection cut by the test") }
            if offset + piece.count > limit { piece = Array(piece.prefix(limit - offset)) }
        case .flipByte(let position):
            if (offset..<offset + piece.count).contains(position) { piece[position - offset] ^= 0xff }
        }
        return piece
    }
}
