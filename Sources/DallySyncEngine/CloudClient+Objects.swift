import AsyncHTTPClient
import DallyCompression
import DallyCore
import DallyObjects
import Foundation
import NIOCore
import NIOHTTP1

/// The object half of the protocol (PROTOCOL.md §13): ask which chunks the cloud lacks, send
/// chunks and manifests, fetch them back.
extension CloudClient {
    /// The most hashes one ask carries.
    static var maxAskedChunks: Int { 10_000 }

    /// Which of `hashes` the cloud lacks (`POST /v1/chunks/missing`), in the order given.
    func missingChunks(_ hashes: [ContentHash]) async throws(CloudError) -> ([ContentHash], Traffic) {
        var missing: [ContentHash] = []
        var traffic = Traffic()
        var start = 0
        while start < hashes.count {
            let slice = hashes[start..<min(start + Self.maxAskedChunks, hashes.count)]
            start += slice.count
            let body = Array(
                JSONValue.object([JSONMember("chunks", .array(slice.map { .string($0.hex) }))]).jsonText.utf8)
            let (document, exchanged) = try await postJSON(body, path: "/v1/chunks/missing")
            traffic.add(exchanged)
            guard case .array(let list)? = document["missing"] else { throw .badAnswer("no \"missing\" list") }
            for element in list {
                guard case .string(let hex) = element, let hash = ContentHash(hex: hex) else {
                    throw .badAnswer("a missing chunk is not a hash")
                }
                missing.append(hash)
            }
        }
        return (missing, traffic)
    }

    /// Sends one chunk (`PUT /v1/chunks/{hash}`), zstd-compressed unless that would not save
    /// enough to pay for itself (photos and video are already compressed).
    func put(chunk bytes: [UInt8], hash: ContentHash) async throws(CloudError) -> Traffic {
        var traffic = Traffic(sentRaw: bytes.count)
        let payload = ChunkCompression.payload(for: bytes)
        traffic.sentCompressed = payload.bytes.count
        var request = HTTPClientRequest(url: baseURL + "/v1/chunks/\(hash.hex)")
        request.method = .PUT
        request.headers.add(name: "Content-Type", value: "application/octet-stream")
        if payload.compressed { request.headers.add(name: "Content-Encoding", value: "zstd") }
        request.body = .bytes(ByteBuffer(bytes: payload.bytes))
        traffic.received = try await exchange(request, timeout: link.requestTimeout).1
        return traffic
    }

    /// Sends a manifest (`PUT /v1/objects/{hash}`) once all of its chunks are up.
    func put(manifest: ObjectManifest) async throws(CloudError) -> Traffic {
        let body = Array(manifest.json.jsonText.utf8)
        let (_, traffic) = try await putJSON(body, path: "/v1/objects/\(manifest.hash.hex)")
        return traffic
    }

    /// An object's manifest (`GET /v1/objects/{hash}`); nil when the cloud does not hold it whole.
    func manifest(of hash: ContentHash) async throws(CloudError) -> (ObjectManifest?, Traffic) {
        var request = HTTPClientRequest(url: baseURL + "/v1/objects/\(hash.hex)")
        request.method = .GET
        let document: JSONValue
        let received: Int
        do {
            (document, received) = try await exchange(request, timeout: link.requestTimeout)
        } catch .refused(404, _, _) {
            return (nil, Traffic())
        }
        let manifest: ObjectManifest
        do {
            manifest = try ObjectManifest(json: document)
        } catch {
            throw .badAnswer("object \(hash): \(error.message)")
        }
        guard manifest.hash == hash else { throw .badAnswer("asked for object \(hash), got \(manifest.hash)") }
        return (manifest, Traffic(received: received))
    }

    /// One chunk's bytes (`GET /v1/chunks/{hash}`), checked against its hash.
    func chunk(_ hash: ContentHash) async throws(CloudError) -> ([UInt8], Traffic) {
        var request = HTTPClientRequest(url: baseURL + "/v1/chunks/\(hash.hex)")
        request.method = .GET
        let (response, bytes, received) = try await send(
            request, timeout: link.requestTimeout, maxAnswer: ObjectManifest.maxChunkBytes)
        guard (200..<300).contains(response.status.code) else {
            let _ = try Self.json(bytes, status: response.status)
            throw .badAnswer("status \(response.status.code) for chunk \(hash)")
        }
        guard ContentHash.of(bytes) == hash else { throw .badAnswer("chunk \(hash) arrived with other bytes") }
        return (bytes, Traffic(received: received))
    }

    private func postJSON(_ body: [UInt8], path: String) async throws(CloudError) -> (JSONValue, Traffic) {
        try await sendJSON(body, path: path, method: .POST)
    }

    private func putJSON(_ body: [UInt8], path: String) async throws(CloudError) -> (JSONValue, Traffic) {
        try await sendJSON(body, path: path, method: .PUT)
    }

    private func sendJSON(_ body: [UInt8], path: String, method: HTTPMethod) async throws(CloudError)
        -> (JSONValue, Traffic)
    {
        var traffic = Traffic(sentRaw: body.count)
        var payload = body
        var compressed = false
        if body.count > 512, let zstd = try? Compressor.compress(body, coding: .zstd, level: link.level), zstd.count < body.count {
            payload = zstd
            compressed = true
        }
        traffic.sentCompressed = payload.count
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        request.headers.add(name: "Content-Type", value: "application/json")
        if compressed { request.headers.add(name: "Content-Encoding", value: "zstd") }
        request.body = .bytes(ByteBuffer(bytes: payload))
        let (document, received) = try await exchange(request, timeout: link.requestTimeout)
        traffic.received = received
        return (document, traffic)
    }
}
