import DallyObjects

/// The answer to the first object's ask, made while the wake's rows go up: on a long link the
/// ask's round trip then passes beside the rows' instead of after it.
///
/// On a long link the object's first chunk goes beside the ask too (``firstChunk``): waiting
/// for the answer before sending it would leave the link idle a round trip. The walk takes
/// that upload over when the cloud lacks the chunk (a partial copy the answer names is most
/// often that upload's own first bytes); when the cloud has it whole the upload is cut, having
/// cost the bytes handed to the connection until the answer came.
///
/// When that chunk is the whole object, its manifest goes beside them too (``manifest``),
/// asking the cloud to wait for the chunk: the object is recorded as the chunk lands, not a
/// round trip after the ask's answer.
///
/// The walk takes it in place of its own first ask when it is about the same object and the
/// same chunks. An answer a little old is as good as a fresh one: a chunk that arrived since is
/// sent again and answered `stored: false`, one collected since is named by the manifest's
/// `missing_chunks`, and a partial body dropped since is refused with its offset.
///
/// ```swift
/// let ahead = Task { await uploader.askAhead(on: uplink, tables: tables, rowTables: rowTables) }
/// // … send the wake's rows …
/// let outcome = try await uploader.upload(on: uplink, tables: tables, ahead: await ahead.value) { … }
/// ```
struct EarlyAsk: Sendable {
    /// The object asked about.
    let object: ContentHash
    /// The chunks named in the ask.
    let asking: [ContentHash]
    /// Those the cloud lacked, and where its partial bodies of them end.
    let missing: [ContentHash]
    let partial: [ContentHash: Int]
    /// The object's first chunk, sent beside the ask and still going; nil when it was not sent,
    /// or was cut when the answer came.
    let firstChunk: ChunkAhead?
    /// The object's manifest, sent beside the ask (with a `wait`) when its first chunk is its
    /// only one and crosses quickly (``LinkModel/transfersAtOnce(bodyBytes:)``); nil otherwise.
    let manifest: Task<CloudClient.Traffic, any Error>?
    /// Whether the object's walk was begun with the ask (``ReplicaStore/beginObjectUpload(_:)``),
    /// as it is when its first chunk goes beside it: a cut before the walk proper then counts
    /// as an attempt, and the next walk asks where the cloud's copy ends.
    let begun: Bool

    /// A chunk upload begun before the cloud said whether it lacks the chunk.
    struct ChunkAhead: Sendable {
        let hash: ContentHash
        /// The upload; its value is the chunk's size.
        let sending: Task<Int, any Error>
    }
}
