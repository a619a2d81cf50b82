/// `PUT /v1/chunks/{hash}`'s answer once the chunk is whole: `{"stored":true}` (201) when this
/// request stored it, `{"stored":false}` (200) when the cloud held it already.
struct ChunkStoredDocument: Encodable {
    let stored: Bool
}
