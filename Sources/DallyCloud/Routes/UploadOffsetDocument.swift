import DallyHTTP

/// `409 upload_offset`: `{"error":{"code","message"},"offset":n}`, where the cloud's partial
/// chunk ends (0 when it holds none), so that the gateway goes on from there.
struct UploadOffsetDocument: Encodable {
    let error: ErrorDocument.Body
    let offset: Int
}
