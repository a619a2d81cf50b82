/// The tables whose objects a wake may carry up, and whose queued objects it may fetch.
struct ObjectScope {
    let uploads: Set<String>
    let downloads: Set<String>
}
