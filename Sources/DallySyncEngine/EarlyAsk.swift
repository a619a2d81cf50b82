import DallyObjects

/// The answer to the first object's ask, made while the wake's rows go up: on a long link the
/// ask's round trip then passes beside the rows' instead of after it.
///
/// The walk takes it in place of its own first ask when it is about the same object and the
/// same chunks. An answer a little old is as good as a fresh one: a chunk that arrived since is
/// sent again and answered `stored: false`, one collected since is named by the manifest's
/// `missing_chunks`, and a partial body dropped since is refused with its offset.
///
/// ```swift
/// let ahead = Task { await uploader.askAhead(on: uplink, tables: tables) }
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
}
