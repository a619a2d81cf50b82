/// The changes feed: every row write and deletion after a cursor, in order, as it happens.
///
/// Iterating long-polls the gateway (`GET …/changes?since=&wait=`): a change committed while
/// a poll is held arrives at once. The feed never ends by itself: when the gateway cannot be
/// reached, stops, or is busy (`503`), it waits (``Options/retryMinimum``, doubling up to
/// ``Options/retryMaximum``) and polls again from the last change it yielded, so a gateway
/// restart loses and repeats nothing. Other refusals (`unauthorized`, `unknown_table`, …) end
/// the iteration by throwing. Cancel the iterating task to stop.
///
/// Each change's ``Row/seq`` is the cursor: store it with what the change did, and after a
/// restart of the app start again from it with `since:`.
///
/// For example:
/// ```swift
/// var cursor = UserDefaults.standard.integer(forKey: "orders-cursor")
/// for try await change in client.table("orders", as: Order.self).changes(since: Int64(cursor)) {
///     if change.deleted { remove(change.id) } else if let order = change.values { upsert(change.id, order) }
///     UserDefaults.standard.set(change.seq, forKey: "orders-cursor")
/// }
/// ```
public struct ChangeFeed<Values: Decodable & Sendable>: AsyncSequence, Sendable {
    public typealias Element = Row<Values>
    public typealias Failure = any Error

    /// How the feed polls and retries.
    ///
    /// For example: `ChangeFeed<Order>.Options(wait: .seconds(30), retryMaximum: .seconds(10))`.
    public struct Options: Sendable {
        /// How long the gateway holds a poll with nothing new: at least a second, at most the
        /// gateway's `limits.max_wait`.
        public var wait: Duration
        /// Changes asked for per poll (nil: the gateway's default).
        public var pageSize: Int?
        /// The first wait after a failed poll; it doubles after each failure in a row.
        public var retryMinimum: Duration
        /// The longest wait between failed polls.
        public var retryMaximum: Duration
        /// How the feed waits between retries; `Task.sleep` unless a test or an app injects its
        /// own clock.
        public var sleep: @Sendable (Duration) async throws -> Void
        /// Called before each retry with the error and the wait (for logs or a status line).
        public var onRetry: (@Sendable (DallyClientError, Duration) -> Void)?

        /// Options with the defaults given: polls held 25 s, retries after 250 ms doubling up to 15 s.
        public init(
            wait: Duration = .seconds(25), pageSize: Int? = nil, retryMinimum: Duration = .milliseconds(250),
            retryMaximum: Duration = .seconds(15), sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
            onRetry: (@Sendable (DallyClientError, Duration) -> Void)? = nil
        ) {
            self.wait = wait
            self.pageSize = pageSize
            self.retryMinimum = retryMinimum
            self.retryMaximum = retryMaximum
            self.sleep = sleep
            self.onRetry = onRetry
        }
    }

    let client: DallyClient
    let endpoint: Endpoint
    let since: Int64
    let options: Options

    public func makeAsyncIterator() -> Iterator {
        Iterator(feed: self, cursor: since)
    }

    /// Polls as changes are asked for; ``cursor`` is the `seq` of the last change yielded.
    public struct Iterator: AsyncIteratorProtocol {
        let feed: ChangeFeed
        /// The `seq` of the last change yielded (or the starting cursor).
        public private(set) var cursor: Int64
        /// Where the next poll starts: past ``cursor``, and past the rows the last page passed
        /// over (a scoped token sees only its rows; polling from the last one it saw would read
        /// the others again at every poll).
        private var pollFrom: Int64
        private var buffered: [Row<Values>] = []
        private var failures = 0

        init(feed: ChangeFeed, cursor: Int64) {
            self.feed = feed
            self.cursor = cursor
            pollFrom = cursor
        }

        public mutating func next() async throws -> Row<Values>? {
            while buffered.isEmpty {
                try Task.checkCancellation()
                do {
                    let page = try await poll()
                    failures = 0
                    buffered = page.changes.reversed()
                    // `next_since` is at or past the page's last change; older gateways omit it.
                    pollFrom = Swift.max(pollFrom, page.nextSince ?? page.changes.last?.seq ?? pollFrom)
                } catch let error as DallyClientError where Self.isPassing(error) {
                    let pause = backoff()
                    feed.options.onRetry?(error, pause)
                    try await feed.options.sleep(pause)
                }
            }
            // Rows come in seq order; the last one is at the end of the reversed buffer's front.
            let change = buffered.removeLast()
            cursor = change.seq
            return change
        }

        private func poll() async throws -> ChangesPage<Values> {
            var endpoint = feed.endpoint
            // At least a second: a poll held for nothing would be sent again at once, round and
            // round, while nothing changes.
            let waitSeconds = Swift.max(1, feed.options.wait.components.seconds)
            endpoint.query += [("since", String(pollFrom)), ("wait", "\(waitSeconds)s")]
            if let pageSize = feed.options.pageSize { endpoint.query.append(("limit", String(pageSize))) }
            return try await feed.client.call(
                "GET", endpoint, timeout: feed.options.wait + .seconds(30), as: ChangesPage<Values>.self)
        }

        private mutating func backoff() -> Duration {
            let doubled = feed.options.retryMinimum * (1 << Swift.min(failures, 20))
            failures += 1
            return Swift.min(doubled, feed.options.retryMaximum)
        }

        /// Errors a later poll may not see: no connection, a gateway stopping or busy.
        static func isPassing(_ error: DallyClientError) -> Bool {
            switch error {
            case .unreachable: return true
            case .gateway(let refusal): return refusal.status == 503 || refusal.status == 502 || refusal.status == 504
            default: return false
            }
        }
    }
}

extension ChangeFeed.Iterator: Sendable {}
