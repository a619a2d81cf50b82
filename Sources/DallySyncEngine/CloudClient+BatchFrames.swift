import AsyncHTTPClient
import DallyCore

/// Batch bodies in resumable frames (PROTOCOL.md §6.1, ``BatchUpload``).
extension CloudClient {
    /// Sends bytes `offset…` of `upload`'s body as one frame of `POST /v1/batches`; an empty
    /// frame only asks where the cloud's copy ends.
    func post(frame: ArraySlice<UInt8>, of upload: BatchUpload, at offset: Int) async throws(CloudError)
        -> (BatchUpload.Frame, Traffic)
    {
        var request = HTTPClientRequest(url: baseURL + "/v1/batches")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/octet-stream")
        request.headers.add(name: "Dally-Upload-Length", value: "\(upload.payload.count)")
        request.headers.add(name: "Dally-Upload-Offset", value: "\(offset)")
        request.headers.add(name: "Dally-Upload-Hash", value: upload.hash.hex)
        if let coding = upload.coding.header { request.headers.add(name: "Dally-Upload-Encoding", value: coding) }
        let (response, bytes, received) = try await send(
            request, body: Array(frame), timeout: link.requestTimeout, maxAnswer: maxAnswerBytes)
        let traffic = Traffic(sentCompressed: frame.count, received: received)
        if response.status.code == 409, let document = try? JSONParser.parse(bytes),
            document["error"]?["code"] == .string(DallyError.Code.uploadOffset.rawValue),
            case .int(let held)? = document["offset"]
        {
            return (.kept(offset: Int(held)), traffic)
        }
        let document = try Self.json(bytes, status: response.status)
        guard response.status.code == 202 else { return (.answered(document), traffic) }
        guard case .int(let next)? = document["offset"] else { throw .badAnswer("a kept frame's answer has no offset") }
        return (.kept(offset: Int(next)), traffic)
    }
}
