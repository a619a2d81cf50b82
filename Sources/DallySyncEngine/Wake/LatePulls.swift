/// The pulls asked while a wake goes (a sync-now that came as its batches flew, a table the
/// cloud said moved), and which of them a batch of the wake has served.
///
/// Such a pull is served by the wake's closing pull, or, on a long link, by a later batch that
/// carries it: one whose cursors were read after the request came, like the closing pull's,
/// which then costs no round trip of its own. A request counts as served by a batch only if
/// nothing was asked after that batch read its cursors (``SyncRequests/pullsAsked``'s count
/// unchanged): a request made later needs a pull that follows it.
///
/// ```swift
/// var late = LatePulls(askedBefore: requests.urgent.pulls, allowed: ["orders"])
/// // a sync-now of orders comes while a batch flies
/// let (carry, readAt) = late.waiting(in: requests)        // ["orders"]: a batch built now carries it
/// late.carried(carry, readAt: readAt)                      // once that batch's answer is applied
/// late.waiting(in: requests).pulls                         // []: unless something was asked since
/// ```
struct LatePulls: Sendable {
    /// What was asked before the wake began: its first batch or closing pull serves it.
    private let askedBefore: Set<String>
    /// What the waking uplink may pull.
    private let allowed: Set<String>
    /// Pulls brought down by batches whose cursors were read at count `carriedAt`.
    private var carried: Set<String> = []
    private var carriedAt: Int?

    init(askedBefore: Set<String>, allowed: Set<String>) {
        self.askedBefore = askedBefore
        self.allowed = allowed
    }

    /// The pulls asked since the wake began that no batch has served (all of them once
    /// anything was asked after the last batch that carried pulls read its cursors), those
    /// batches did serve, and the requests' count as read: a batch built after this call
    /// that carries `pulls` serves them, as ``carried(_:readAt:)`` records.
    func waiting(in requests: SyncRequests) -> (pulls: Set<String>, served: Set<String>, readAt: Int) {
        let (pulls, generation) = requests.pullsAsked
        let asked = pulls.subtracting(askedBefore).intersection(allowed)
        guard generation == carriedAt else { return (asked, [], generation) }
        return (asked.subtracting(carried), asked.intersection(carried), generation)
    }

    /// A batch whose cursors were read after the requests' count read `generation` brought
    /// `pulls` down, and its answer is applied.
    mutating func carried(_ pulls: some Sequence<String>, readAt generation: Int) {
        if generation == carriedAt {
            carried.formUnion(pulls)
        } else if generation > carriedAt ?? .min {
            carried = Set(pulls)
            carriedAt = generation
        }
    }
}
