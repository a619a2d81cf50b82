import DallyHTTP

/// `409 missing_chunks`: `{"error":{"code","message"},"missing":[hex…]}`.
struct MissingChunksDocument: Encodable {
    let error: ErrorDocument.Body
    let missing: [String]
}
