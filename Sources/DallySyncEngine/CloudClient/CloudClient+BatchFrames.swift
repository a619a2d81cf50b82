import AsyncHTTPClient
import DallyCore

/// Batch bodies in resumable frames (PROTOCOL.md §6.1, ``BatchUpload``).
extension CloudClient {
    /// Sends bytes `offset…` of `upload`'s body as one frame of `POST /v1/batches`; an empty
    /// frame only asks where the cloud's copy ends.
    func post(frame: ArraySlice<UInt8>, of upload: BatchUpload, at offset: Int) async throws(CloudError)
        -> (FrameAnswer, Traffic)
    {
        var request = HTTPClientRequest(url: baseURL + "/v1/batches")
        request.method = .POST
        request.headers.add(name: "Dally-Upload-Hash", value: upload.hash.hex)
        return try await send(
            frame: frame, as: request, at: offset, length: upload.payload.count, encoding: upload.coding.header,
            maxAnswer: maxAnswerBytes)
    }
}
