import DallyCore
import DallyStore
import DallySync
import Foundation
import Synchronization

/// The batches of one wake: sent pipelined, their answers applied in order.
extension SyncCycle {
    /// A batch on the wire.
    private struct Flying: Sendable {
        let batch: OutgoingBatch
        /// It took all the rows it was allowed: more wait, so the next may go at once.
        let full: Bool
        /// When its request begins, on the uplink's transfer timer.
        let begins: Duration
        /// The requests' count when it read the cursors of the pulls it carries
        /// (``LatePulls``); nil when it carries none read in this wake.
        let pullsReadAt: Int?
        /// It carries only the pulls still due after an earlier batch's (``stillDue``), not
        /// all the wake's: its answer cannot say that nothing more waits for the others.
        let pullsStillDue: Bool
        let sending: Task<Result<(BatchAnswer, CloudClient.Traffic), CloudError>, Never>
    }

    /// A batch built and recorded while the window was full, to go the moment an answer
    /// makes room: compressed while it waits, so that it goes on the wire at once.
    private struct Ready: Sendable {
        let batch: OutgoingBatch
        let full: Bool
        let compressing: Compressing
    }

    /// Sends the batches `scope` allows, in flight ones first; whether the cloud said more
    /// changes wait downstream.
    ///
    /// A backlog drains pipelined: while a full batch goes, the next one is built and sent
    /// too where waiting for each answer would idle the link or the cloud (two on the wire,
    /// ``LinkModel/transfersAtOnce(rows:)``); when an answer comes, the next batch is built and
    /// sent while it is applied; answers are applied in order.
    /// The gateway's reader and writer, the link and the cloud work at the same time: on a fast
    /// link the cloud applies one batch while the gateway's reader builds the next and its
    /// writer settles the last, and on a long link the next batch's bytes flow while the one
    /// before waits for its answer instead of the link standing idle a round trip per batch. A
    /// batch built while another flies carries no pulls while an answer that brings pages is
    /// unapplied (its cursors would be read before those pages moved them); what is left
    /// unpulled is pulled at the end of the cycle, or on a long link sooner (below).
    ///
    /// Before the link is measured one batch goes at a time: the wake opens with a small one,
    /// just large enough to measure the link (``LinkModel/openingBatchRows(_:)``), and the next
    /// is built while it flies, ready to go when its answer comes: a gateway back from an
    /// outage then neither builds its second batch while the cloud waits for it nor waits for
    /// a whole first batch's apply before two go at once. When that answer shows the ready
    /// batch too large for the link (``LinkModel/batchRows(limit:target:)``), it is set aside
    /// unsent and built again at the measured size. Once the link is measured, a batch is
    /// built ahead beside a full window where batches cross quickly
    /// (``LinkModel/crossesQuickly(rows:)``): the gateway's reader builds the batch after next
    /// while its writer settles an answer, and the cloud, given it as soon as that answer
    /// came, does not wait for a build.
    ///
    /// On a long link, a batch built once every answer that brings pages down is applied
    /// carries the pulls still due (`unpulled`, and those asked since the wake began, `late`):
    /// its answer serves them instead of a closing pull a round trip after the last answer.
    ///
    /// - Parameters:
    ///   - unpulled: due tables no batch has brought up to date yet.
    ///   - late: pulls asked since the wake began; those batches serve are recorded.
    ///   - tending: set to the dictionaries' tend begun beside the last batch on a long link
    ///     (``DictionaryExchange/tend(on:uploads:)``), for the wake's end to await; left as it
    ///     is when none began.
    func sendBatches(
        on uplink: Uplink, scope: BatchScope, report: inout SyncReport, unpulled: inout Set<String>,
        late: inout LatePulls, tending: inout Task<Void, any Error>?
    ) async throws -> Bool {
        var more = false
        var rowLimit = link.maxBatchRows
        var batches = 0
        let model = uplink.client.watch.model
        let target = uplink.config.timings.targetRequestTime
        let gateway = link.gatewayID
        var flying: [Flying] = []
        var ready: Ready?
        // Whether the wake's last batch is built (one not full, or none was left).
        var lastBuilt = false
        // A pull of the tables still due, beside the last batches when none of them brings
        // pages; the requests' count read before it read its cursors.
        var pullingBeside: (task: Task<SyncReport, any Error>, tables: Set<String>, readAt: Int)?
        // A cycle that ends early (an error, a stop) leaves the batches on the wire in flight:
        // they are resent, or asked about, at the next wake.
        defer {
            flying.forEach { $0.sending.cancel() }
            pullingBeside?.task.cancel()
        }
        let book = dictionaries.book
        let timer = uplink.client.watch.timer
        func send(
            _ batch: OutgoingBatch, full: Bool, pullsReadAt: Int? = nil, pullsStillDue: Bool = false,
            compressed: Compressing? = nil
        ) {
            // Beside a batch on the wire, a round trip after it began on a long link, so that
            // the two do not end together and idle the link while both wait for their answers.
            let now = timer.elapsed()
            let begins = flying.last.map { max(now, $0.begins + model.spacing(afterBatchOf: $0.batch.rows)) } ?? now
            // With the answer's and the settle's, a drain's timeline from the log alone
            // (`log_level = "debug"`, `log_format = "json"`: millisecond times).
            logger.debug(
                "sending a batch",
                metadata: [
                    "batch": "\(batch.batchID)", "rows": "\(batch.rows)", "on_wire": "\(flying.count + 1)",
                    "uplink": "\(uplink.name)", "after_ms": "\((begins - now).milliseconds)",
                ])
            let sending = Task {
                guard await timer.pause(until: begins) else {
                    return Result<(BatchAnswer, CloudClient.Traffic), CloudError>.failure(.unreachable("the wake ended"))
                }
                return await self.attempt(batch, on: uplink, compressed: compressed)
            }
            flying.append(
                Flying(
                    batch: batch, full: full, begins: begins, pullsReadAt: pullsReadAt, pullsStillDue: pullsStillDue,
                    sending: sending))
        }
        // Fills the window: a first batch, then more while the last one built was full, and
        // one ready beside a lone batch on an unmeasured link. `answered` came back and is not
        // applied yet: its rows are still in flight, and a batch built meanwhile must not read
        // cursors its pages are about to move.
        func fill(answered: Flying? = nil) async throws {
            if let waiting = ready, flying.count < model.transfersAtOnce(rows: waiting.batch.rows) {
                ready = nil
                if waiting.batch.rows > model.batchRows(limit: rowLimit, target: target) {
                    try await store.abandonBatch(batchID: waiting.batch.batchID)
                } else {
                    send(waiting.batch, full: waiting.full, compressed: waiting.compressing)
                }
            }
            while batches + flying.count + (ready == nil ? 0 : 1) < Self.maxBatchesPerCycle {
                if let lastFull = ready?.full ?? flying.last?.full ?? answered?.full, !lastFull { break }
                // Each batch sized so that it takes about target_request_time on the measured link;
                // a wake's first (nothing answered, nothing on the wire: nor ready, which is only
                // built beside one) on a link not measured yet small, so that its answer opens
                // the window soon.
                let sized = model.batchRows(limit: rowLimit, target: target)
                let maxRows = batches == 0 && flying.isEmpty ? model.openingBatchRows(sized) : sized
                let onWire = flying.isEmpty || flying.count < model.transfersAtOnce(rows: maxRows)
                if !onWire {
                    // One built ahead: beside the opening batch on an unmeasured link, and beside
                    // a full window on a link a batch crosses quickly.
                    let ahead = (flying.count == 1 && !model.measuresThroughput) || model.crossesQuickly(rows: maxRows)
                    if ready != nil || !ahead { break }
                }
                let building = flying.map(\.batch.batchID) + [answered?.batch.batchID, ready?.batch.batchID].compactMap { $0 }
                let (pulls, readAt, asked, stillDue) =
                    onWire ? pulls(answered: answered) : (scope.withoutPulls, nil, [], false)
                guard let batch = try await store.nextBatch(
                    gateway: gateway, maxRows: maxRows, scope: pulls, excluding: Set(building))
                else {
                    lastBuilt = true
                    break
                }
                let full = batch.rows >= maxRows
                if !full { lastBuilt = true }
                guard onWire else {
                    let client = uplink.client
                    let body = batch.body
                    ready = Ready(
                        batch: batch, full: full,
                        compressing: Task { Result { () throws(CloudError) in try client.compress(batch: body, dictionaries: book) } })
                    break
                }
                // A batch sent before carries the cursors it read then, and may be answered
                // from the answer the cloud stored: it serves no pull asked since.
                let carries = !batch.resent && !batch.pulls.isEmpty
                if carries, !asked.isDisjoint(with: batch.pulls) { counters.withLock { $0.pullsRiding += 1 } }
                send(batch, full: full, pullsReadAt: carries ? readAt : nil, pullsStillDue: stillDue)
            }
            tendBeside()
            pullBeside(answered: answered)
        }
        // What a batch built now may bring down, and the requests' count read before its
        // cursors: the whole scope for the first on the wire; on a long link the pulls still
        // due once no batch whose answer brings pages is unapplied (its cursors would be read
        // before those pages moved them, and the same pages come down twice); else none.
        // `asked`: the pulls asked since the wake began that it may serve; `stillDue`: whether
        // it carries only those still due.
        func pulls(answered: Flying?) -> (scope: BatchScope, readAt: Int?, asked: Set<String>, stillDue: Bool) {
            guard pullingBeside == nil else { return (scope.withoutPulls, nil, [], false) }
            if flying.isEmpty, answered == nil {
                let (waiting, _, readAt) = late.waiting(in: requests)
                return (scope, readAt, waiting, false)
            }
            guard let due = stillDue(answered: answered) else { return (scope.withoutPulls, nil, [], false) }
            let narrowed = BatchScope(uploads: scope.uploads, pulls: due.tables, pullsRiding: scope.pullsRiding)
            return (narrowed, due.readAt, due.asked, true)
        }
        // On a long link, the pulls due (not carried yet, or asked since the wake began, those
        // `asked`) once no batch whose answer brings pages is unapplied; nil when none, or on a
        // short link.
        func stillDue(answered: Flying?) -> (tables: Set<String>, readAt: Int, asked: Set<String>)? {
            let unapplied = flying + [answered].compactMap { $0 }
            guard model.roundTripIsLong, unapplied.allSatisfy({ $0.batch.pulls.isEmpty }) else { return nil }
            let (waiting, _, readAt) = late.waiting(in: requests)
            let due = waiting.union(unpulled)
            return due.isEmpty ? nil : (due, readAt, waiting)
        }
        // The last batches are on the wire and none carries the pulls still due (resends
        // after a cut, built without them, or a request that came after the last was built):
        // on a long link they go beside, instead of a round trip after the last answer.
        func pullBeside(answered: Flying?) {
            guard lastBuilt, pullingBeside == nil, !flying.isEmpty, let due = stillDue(answered: answered) else { return }
            pullingBeside = (Task { try await self.pull(due.tables, on: uplink) }, due.tables, due.readAt)
            counters.withLock { $0.pullsBeside += 1 }
        }
        func awaitPullBeside() async throws {
            guard let beside = pullingBeside else { return }
            report.add(try await beside.task.value)
            pullingBeside = nil
            unpulled.subtract(beside.tables)
            late.carried(beside.tables, readAt: beside.readAt)
        }
        // On a long link, the dictionaries due from this wake's samples train and go up while
        // its last batch crosses, instead of a round trip after its answer that the wake's end
        // (and a sync-now waiting on it) would wait for; the wake's closing tend then has
        // nothing left to send. On a short link they wait for the end, off the drain's CPU.
        func tendBeside() {
            guard lastBuilt, tending == nil, !flying.isEmpty, book != nil, model.roundTripIsLong else { return }
            tending = Task { try await self.dictionaries.tend(on: uplink, uploads: scope.uploads) }
        }
        func drain() async throws {
            while true {
                try await fill()
                guard !flying.isEmpty else { break }
                let sent = flying.removeFirst()
                let batch = sent.batch
                batches += 1
                let answer: BatchAnswer
                let traffic: CloudClient.Traffic
                var pulled = true
                switch await sent.sending.value {
                case .success(let exchange):
                    (answer, traffic) = exchange
                case .failure(.refused(413, let code, let message)) where batch.rows == 1:
                    // A row the cloud will never take: alone it makes a body over the cloud's
                    // limits. It is rejected as the cloud rejects a row, parked with the reason
                    // in /v1/conflicts until settled, instead of failing every sync after it (in
                    // flight, it went first at every wake, and nothing written after it left).
                    guard let rejection = Self.tooLarge(batch, code: code, message: message) else {
                        throw CloudError.refused(status: 413, code: code, message: message)
                    }
                    uplink.recordAnswer(CloudClient.Traffic(), now: now())
                    logger.error(
                        "the cloud refused a row as too large for any batch; parked until settled",
                        metadata: ["batch": "\(batch.batchID)", "table": "\(rejection.table)", "error": "\(message)"])
                    answer = BatchAnswer(batchID: batch.batchID, replayed: false, results: [rejection], changes: [])
                    traffic = CloudClient.Traffic()
                    pulled = false
                    rowLimit = link.maxBatchRows
                case .failure(.refused(413, let code, _)) where batch.rows > 1:
                    // Refused whole, before anything was applied: send the rows in smaller batches.
                    uplink.recordAnswer(CloudClient.Traffic(), now: now())
                    try await store.abandonBatch(batchID: batch.batchID)
                    counters.withLock { _ = $0.lastUplink.removeValue(forKey: batch.batchID) }
                    rowLimit = max(1, batch.rows / 2)
                    logger.warning(
                        "the cloud refused a batch as too large; splitting it",
                        metadata: ["code": "\(code?.rawValue ?? "unknown")", "rows": "\(batch.rows)", "next_rows": "\(rowLimit)"])
                    continue
                case .failure(.refused(_, .unknownDictionary, let message)) where dictionaries.book != nil:
                    // The cloud lost a dictionary (its store was replaced?): nothing was applied,
                    // so the same batch goes again at once, compressed without the dictionaries.
                    uplink.recordAnswer(CloudClient.Traffic(), now: now())
                    try await dictionaries.forget(usedBy: batch.body, reason: message)
                    continue
                case .failure(let error):
                    throw error
                }
                logger.debug("a batch answered", metadata: ["batch": "\(batch.batchID)", "uplink": "\(uplink.name)"])
                uplink.recordAnswer(traffic, now: now())
                if traffic.sentCompressed > 0 { model.noteBatch(rows: batch.rows, bytesOnWire: traffic.sentCompressed) }
                // The next batches are built and sent while this answer is applied: the link does
                // not wait for the writer, and the reader plans and encodes the next batch while
                // the writer settles this one.
                async let settling = apply(answer, on: uplink)
                try await fill(answered: sent)
                let applied: SyncReport
                if flying.isEmpty, ready == nil {
                    // The wake's last answer: every section it sent was noted as a sample when
                    // it was compressed, so dictionaries that are due train while it is applied.
                    async let training: Void = dictionaries.trainDue()
                    applied = try await settling
                    try await training
                } else {
                    applied = try await settling
                }
                logger.debug("a batch's answer applied", metadata: ["batch": "\(batch.batchID)", "uplink": "\(uplink.name)"])
                report.add(applied)
                if pulled {
                    unpulled.subtract(batch.pulls)
                    if let readAt = sent.pullsReadAt { late.carried(batch.pulls, readAt: readAt) }
                }
                // Only a batch that asked for pages can say more wait (most pipelined ones ask
                // none); one that carried only the pulls still due does not take back what an
                // earlier one said of the others.
                if !batch.pulls.isEmpty { more = sent.pullsStillDue ? more || applied.more : applied.more }
                counters.withLock { counters in
                    counters.lastUplink[batch.batchID] = nil
                    counters.batchesSent += 1
                    if batch.resent { counters.batchesResent += 1 }
                    counters.rows.add(applied)
                    counters.traffic.add(traffic)
                }
            }
        }
        do {
            try await drain()
            try await awaitPullBeside()
        } catch {
            tending?.cancel()
            _ = try? await tending?.value
            pullingBeside?.task.cancel()
            _ = try? await pullingBeside?.task.value
            // Never sent: forgotten, so that the next wake does not take it for a batch whose
            // answer was lost (and ask the cloud about it).
            if let ready { try? await store.abandonBatch(batchID: ready.batch.batchID) }
            throw error
        }
        return more
    }

    /// The answer a one-row batch refused as too large gets: its row rejected with the cloud's
    /// code and a message saying what to do; nil when its outline names no row.
    private static func tooLarge(_ batch: OutgoingBatch, code: DallyError.Code?, message: String) -> BatchAnswer.SectionResult? {
        guard let section = batch.outline.sections.first(where: { !$0.ids.isEmpty }), let id = section.ids.first else {
            return nil
        }
        let reason = """
            the cloud refused this row as too large for any batch (\(message)); make the row smaller, or raise \
            the cloud's limits.max_body_bytes and max_decompressed_bytes, then settle it (POST /v1/conflicts/\
            \(section.table)/\(id))
            """
        return BatchAnswer.SectionResult(
            table: section.table,
            rows: [.rejected(id: id, BatchAnswer.RowRejection(code: code?.rawValue ?? "body_too_large", message: reason, field: nil))])
    }

    /// Applies a batch's answer, with the objects its pages' atomic rows need.
    private func apply(_ answer: BatchAnswer, on uplink: Uplink) async throws -> SyncReport {
        try await fetcher.fetchAtomicObjects(of: answer.changes, on: uplink)
        let report = try await store.applyAnswer(answer)
        if report.rejected > 0 { logRefusals(in: answer) }
        return report
    }

    /// Logs the changes the cloud refused in `answer`, one line per table and code: each is
    /// parked with an error record (`/v1/conflicts`), which `/stats` otherwise only counts.
    private func logRefusals(in answer: BatchAnswer) {
        var refused: [String: (table: String, count: Int, first: BatchAnswer.RowRejection)] = [:]
        for section in answer.results {
            for case .rejected(_, let rejection) in section.rows {
                let key = section.table + " " + rejection.code
                refused[key, default: (section.table, 0, rejection)].count += 1
            }
        }
        for (_, group) in refused.sorted(by: { $0.key < $1.key }) {
            logger.warning(
                "the cloud refused changes; each waits with an error record in /v1/conflicts",
                metadata: [
                    "table": "\(group.table)", "code": "\(group.first.code)", "changes": "\(group.count)",
                    "field": "\(group.first.field ?? "")", "message": "\(group.first.message)",
                ])
        }
    }
}
