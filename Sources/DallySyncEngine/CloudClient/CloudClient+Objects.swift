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

    /// Which of `hashes` the cloud lacks (`POST /v1/chunks/missing`), in the order given, and
    /// where the cloud's partial copy of each of those that an earlier upload left ends.
    func missingChunks(_ hashes: [ContentHash]) async throws(CloudError)
        -> (missing: [ContentHash], partial: [ContentHash: Int], traffic: Traffic)
    {
        var missing: [ContentHash] = []
        var partial: [ContentHash: Int] = [:]
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
            if case .object(let members)? = document["partial"] {
                for member in members {
                    guard let hash = ContentHash(hex: member.key), case .int(let offset) = member.value, offset > 0 else {
                        throw .badAnswer("a partial chunk is not a hash with its offset")
                    }
                    partial[hash] = Int(offset)
                }
            }
        }
        return (missing, partial, traffic)
    }

    /// Sends bytes `offset…` of a chunk's body of `length` bytes as one frame of a resumable
    /// upload (`PUT /v1/chunks/{hash}` with `Dally-Upload-Length`); `queued` as in
    /// ``sendRaw(_:body:timeout:quiet:maxAnswer:smallAnswer:tap:queued:)``.
    func put(
        frame: ArraySlice<UInt8>, of hash: ContentHash, at offset: Int, length: Int, compressed: Bool,
        queued: (@Sendable () -> Void)? = nil
    ) async throws(CloudError) -> (FrameAnswer, Traffic) {
        var request = HTTPClientRequest(url: baseURL + "/v1/chunks/\(hash.hex)")
        request.method = .PUT
        return try await send(
            frame: frame, as: request, at: offset, length: length, encoding: compressed ? "zstd" : nil,
            maxAnswer: 64 * 1024, smallAnswer: true, queued: queued)
    }

    /// Sends a manifest (`PUT /v1/objects/{hash}`) once all of its chunks are up, or, with
    /// `wait`, while the last ones are still on their way: the cloud then waits that long for
    /// them (`?wait=`, PROTOCOL.md §13.3) and the answer may rightly take as long.
    func put(manifest: ObjectManifest, waitingUpTo wait: Duration = .zero) async throws(CloudError) -> Traffic {
        let body = Array(manifest.json.jsonText.utf8)
        let query = wait > .zero ? "?wait=\(wait.milliseconds)ms" : ""
        // The answer is the object's reference, or, should the cloud have collected chunks
        // meanwhile, the list of them: rarely more than a few hundred bytes.
        let (_, traffic) = try await sendJSON(
            body, path: "/v1/objects/\(manifest.hash.hex)\(query)", method: .PUT, quiet: wait, smallAnswer: true)
        return traffic
    }

    /// An object's manifest (`GET /v1/objects/{hash}`); nil when the cloud does not hold it whole.
    func manifest(of hash: ContentHash) async throws(CloudError) -> (ObjectManifest?, Traffic) {
        guard let (document, received) = try await lookUp("/v1/objects/\(hash.hex)") else { return (nil, Traffic()) }
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
    func chunk(_ hash: ContentHash, partials: PartialDownloads? = nil) async throws(CloudError) -> ([UInt8], Traffic) {
        let earlier = partials?.take(hash)
        var request = HTTPClientRequest(url: baseURL + "/v1/chunks/\(hash.hex)")
        request.method = .GET
        if let earlier { request.headers.add(name: "Range", value: "bytes=\(earlier.bytes.count)-") }
        let tap = AnswerTap()
        let response: HTTPClientResponse
        let answer: ByteBuffer
        do {
            (response, answer) = try await sendRaw(
                request, timeout: link.requestTimeout, maxAnswer: ObjectManifest.maxChunkBytes, tap: tap)
        } catch {
            if let partials, let kept = Self.kept(tap.received, after: earlier) { partials.keep(hash, kept) }
            throw error
        }
        let encoded: [UInt8]
        var resumed = 0
        switch response.status.code {
        case 206:
            guard let earlier, Self.continues(response, earlier) else {
                throw .badAnswer("chunk \(hash): a partial answer that does not continue what was kept")
            }
            encoded = earlier.bytes + Array(buffer: answer)
            resumed = earlier.bytes.count
        case 200..<300:
            encoded = Array(buffer: answer)
        default:
            let _ = try Self.json(Self.decodedError(answer, response), status: response.status)
            throw .badAnswer("status \(response.status.code) for chunk \(hash)")
        }
        let bytes = try Self.decoded(ByteBuffer(bytes: encoded), response: response, maxAnswer: ObjectManifest.maxChunkBytes)
        guard ContentHash.of(bytes) == hash else { throw .badAnswer("chunk \(hash) arrived with other bytes") }
        var traffic = Traffic(received: answer.readableBytes)
        traffic.resumedDown = resumed
        return (bytes, traffic)
    }

    /// What to keep of a cut answer for the next attempt: the bytes kept before and those that
    /// came, when the answer was the chunk (200) or the rest of it (206 from where it stopped).
    static func kept(
        _ received: (response: HTTPClientResponse?, body: ByteBuffer), after earlier: PartialDownloads.Partial?
    ) -> PartialDownloads.Partial? {
        guard let response = received.response else { return earlier }
        let coding = coding(of: response)
        switch response.status.code {
        case 200:
            return PartialDownloads.Partial(bytes: Array(buffer: received.body), coding: coding)
        case 206:
            guard let earlier, continues(response, earlier) else { return nil }
            return PartialDownloads.Partial(bytes: earlier.bytes + Array(buffer: received.body), coding: coding)
        default:
            return nil
        }
    }

    /// Whether a 206 answer goes on from the end of `earlier`, in the same encoding.
    static func continues(_ response: HTTPClientResponse, _ earlier: PartialDownloads.Partial) -> Bool {
        guard coding(of: response) == earlier.coding,
            let range = response.headers.first(name: "Content-Range"), range.hasPrefix("bytes ")
        else { return false }
        let first = range.dropFirst(6).prefix { $0 != "-" }
        return Int(first) == earlier.bytes.count
    }

    /// An error answer's body, decoded when it can be (an error is JSON, small).
    private static func decodedError(_ answer: ByteBuffer, _ response: HTTPClientResponse) -> [UInt8] {
        (try? decoded(answer, response: response, maxAnswer: 1 << 20)) ?? Array(buffer: answer)
    }

    private func postJSON(_ body: [UInt8], path: String) async throws(CloudError) -> (JSONValue, Traffic) {
        try await sendJSON(body, path: path, method: .POST)
    }

    private func sendJSON(
        _ body: [UInt8], path: String, method: HTTPMethod, quiet: Duration = .zero, smallAnswer: Bool = false
    ) async throws(CloudError) -> (JSONValue, Traffic) {
        var traffic = Traffic(sentRaw: body.count)
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        let payload = jsonBody(body, on: &request)
        traffic.sentCompressed = payload.count
        let (document, received) = try await exchange(
            request, body: payload, timeout: link.requestTimeout, quiet: quiet, smallAnswer: smallAnswer)
        traffic.received = received
        return (document, traffic)
    }

    /// `body`, a JSON document, as it goes on `request`: compressed with zstd when that makes
    /// it smaller (past a few hundred bytes), its headers set to say so.
    func jsonBody(_ body: [UInt8], on request: inout HTTPClientRequest) -> [UInt8] {
        request.headers.add(name: "Content-Type", value: "application/json")
        guard body.count > 512, let zstd = try? Compressor.compress(body, coding: .zstd, level: link.level), zstd.count < body.count
        else { return body }
        request.headers.add(name: "Content-Encoding", value: "zstd")
        return zstd
    }
}
