import DallyClient
import Foundation
import Testing

@testable import DallyClient

/// Every error code a gateway alone can answer comes out of the client as a typed
/// `DallyClientError` with the gateway's code, status, message and field.
@Suite struct ErrorCodeTests {
    /// Runs `action` and returns the error it throws (failing the test when it throws none or
    /// another kind).
    func refusal(_ action: () async throws -> Void) async throws -> DallyClientError {
        do {
            try await action()
        } catch let error as DallyClientError {
            return error
        }
        throw TestFailure("no error thrown")
    }

    func expect(
        _ code: DallyErrorCode, _ status: Int, field: String? = nil, sourceLocation: SourceLocation = #_sourceLocation,
        _ action: () async throws -> Void
    ) async throws {
        let error = try await refusal(action)
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        #expect(error.status == status, "\(error)", sourceLocation: sourceLocation)
        #expect(!error.message.isEmpty, sourceLocation: sourceLocation)
        if let field { #expect(error.field == field, "\(error)", sourceLocation: sourceLocation) }
    }

    @Test func everyGatewayErrorIsTyped() async throws {
        try await ClientSystem.run(maxObjectBytes: 100_000) { system in
            let client = system.client()
            let reader = system.client(token: ClientSystem.readerToken)
            let admin = system.client(token: ClientSystem.adminToken)
            let stranger = system.client(token: "not-a-token-0123456789")
            do {
                try await checks(client: client, reader: reader, admin: admin, stranger: stranger)
            } catch {
                for c in [client, reader, admin, stranger] { try? await c.shutdown() }
                throw error
            }
            for c in [client, reader, admin, stranger] { try await c.shutdown() }
        }
    }

    func checks(client: DallyClient, reader: DallyClient, admin: DallyClient, stranger: DallyClient) async throws {
        do {
            let orders = client.table("orders", as: Order.self)
            let photos = client.table("photos")
            try await orders.put(id: "o1", Order(customer: "Ada"))

            func raw(_ method: String, _ endpoint: Endpoint, _ body: String? = nil, headers: [(name: String, value: String)] = [])
                async throws
            {
                let response = try await client.send(
                    method, endpoint, headers: headers, body: body.map { .bytes(Array($0.utf8)) } ?? .none)
                _ = try await response.body.collect(upTo: 1 << 20)
            }
            let o1 = Endpoint("v1", "tables", "orders", "rows", "o1")

            try await expect(.malformedJSON, 400) { try await raw("PUT", o1, "{") }
            try await expect(.badRequest, 400) { try await raw("PUT", o1, #"{"vals":{}}"#) }
            try await expect(.badQuery, 400, field: "since") {
                try await raw("GET", Endpoint(segments: ["v1", "tables", "orders", "rows"], query: [("since", "x")]))
            }
            try await expect(.invalidID, 400) { try await orders.put(id: "bad id!", Order()) }
            try await expect(.unauthorized, 401) { _ = try await stranger.table("orders").get(id: "o1") }
            try await expect(.forbidden, 403) { try await reader.table("orders").put(id: "o9", .object([])) }
            try await expect(.forbidden, 403) { _ = try await admin.table("orders").get(id: "o1") }
            try await expect(.unknownTable, 404) { try await client.table("nope").put(id: "x", .object([])) }
            try await expect(.notFound, 404) { try await orders.patch(id: "o404", Payment(paid: true)) }
            try await expect(.versionMismatch, 409) { try await orders.put(id: "o1", Order(), expectedSeq: 0) }
            try await expect(.bodyTooLarge, 413) {
                try await orders.put(id: "o2", Order(customer: String(repeating: "a", count: 5000)))
            }
            try await expect(.tooManyRows, 413) {
                var batch = Batch<Order>()
                for i in 0..<21 { batch.create(id: "b\(i)", Order()) }
                _ = try await orders.batch(batch)
            }
            try await expect(.unknownColumn, 422, field: "colour") { try await orders.patch(id: "o1", ["colour": "red"]) }
            try await expect(.wrongType, 422, field: "total") { try await orders.patch(id: "o1", ["total": "x"]) }
            try await expect(.syncDisabled, 409) { try await orders.sync() }
            try await expect(.notFound, 404) { try await client.settle(table: "orders", id: "o1", .takeLocal) }

            // Objects.
            let bytes = Array("hello, object".utf8)
            try await expect(.objectColumn, 422) {
                try await orders.uploadObject(id: "o1", column: "customer", from: ByteStream(bytes: bytes))
            }
            try await expect(.hashMismatch, 422) {
                try await photos.uploadObject(id: "p1", column: "image", from: ByteStream(bytes: bytes), sha256: String(repeating: "0", count: 64))
            }
            try await expect(.objectTooLarge, 413) {
                // This gateway's objects.max_bytes is 100 000: refused from the Content-Length.
                let large = [UInt8](repeating: 7, count: 150_000)
                try await photos.uploadObject(id: "p1", column: "image", from: ByteStream(bytes: large), length: 150_000)
            }
            try await expect(.unsupportedEncoding, 415) {
                let response = try await client.send(
                    "PUT", Endpoint("v1", "tables", "photos", "rows", "p1", "objects", "image"),
                    headers: [(name: "Content-Encoding", value: "gzip")], body: .bytes(bytes))
                _ = try await response.body.collect(upTo: 1 << 20)
            }
            try await expect(.unknownObject, 422) {
                let naming = client.table("photos", as: [String: ObjectName].self)
                try await naming.put(id: "p2", ["image": ObjectInfo.named(String(repeating: "a", count: 64))])
            }
            try await expect(.notFound, 404) { _ = try await photos.objectStream(id: "p404", column: "image") }
            try await photos.uploadObject(id: "p3", column: "image", from: ByteStream(bytes: bytes))
            try await expect(.rangeNotSatisfiable, 416) {
                _ = try await photos.objectStream(id: "p3", column: "image", range: 100...200)
            }

            // Not the gateway's: nobody listens.
            let nowhere = DallyClient(url: "http://127.0.0.1:1", token: ClientSystem.clientToken)
            let unreachable = try await refusal { _ = try await nowhere.table("orders").get(id: "o1") }
            try await nowhere.shutdown()
            guard case .unreachable = unreachable else { throw TestFailure("expected unreachable, got \(unreachable)") }
            #expect(unreachable.code == nil)
            #expect(unreachable.status == nil)
        }
    }

    @Test func unknownCodesKeepTheirName() {
        let error = ErrorAnswer.error(
            status: 418, body: Array(#"{"error":{"code":"teapot","message":"short and stout","field":"spout"}}"#.utf8),
            retryAfter: "3")
        guard case .gateway(let refusal) = error else {
            Issue.record("expected a gateway refusal, got \(error)")
            return
        }
        #expect(refusal.code == nil)
        #expect(refusal.codeName == "teapot")
        #expect(refusal.field == "spout")
        #expect(refusal.retryAfter == 3)
        #expect(error.status == 418)
        // A body that is not the gateway's document (a proxy's page) still gives the status.
        let proxy = ErrorAnswer.error(status: 502, body: Array("<html>bad gateway</html>".utf8), retryAfter: nil)
        #expect(proxy.status == 502)
        #expect(proxy.code == nil)
    }
}
