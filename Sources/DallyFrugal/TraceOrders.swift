import DallyCore

/// Orders: business rows with hot updates. Each order is placed by one client, then edited
/// by the same client in the following minutes: cart changes while it is new, then
/// `new → paid → packed → shipped`; a few are cancelled (deleted) instead.
///
/// Hot rows are what a delay-tolerant uplink coalesces: an order written five times within its
/// max delay need travel only once.
struct TraceOrders {
    let clients: Int
    let duration: Int64
    var random: SplitMix64

    static let statuses = ["new", "paid", "packed", "shipped"]
    /// At most this many lines per order.
    static let maxItems = 6

    /// One order's cart.
    private struct Line {
        var sku: Int
        var qty: Int
    }

    /// Unit price of a SKU in cents: fixed per SKU, so an order's total is the sum of its lines.
    static func priceCents(sku: Int) -> Int { 199 + (sku * 7_919) % 9_800 }

    mutating func writes() -> [TraceWrite] {
        let count = TraceWorkload.scaled(TraceWorkload.ordersPerHour, clients: clients, duration: duration)
        var placed: [(at: Int64, client: Int)] = (0..<count).map { _ in
            (random.int64(in: 0...(duration - 1)), random.int(in: 0...(clients - 1)))
        }
        placed.sort { $0.at != $1.at ? $0.at < $1.at : $0.client < $1.client }
        var sequence = Array(repeating: 0, count: clients)
        var result: [TraceWrite] = []
        for order in placed {
            sequence[order.client] += 1
            result += writes(id: "o-\(order.client)-\(sequence[order.client])", at: order.at, client: order.client)
        }
        return result
    }

    /// The placement of one order and its updates, cut at the end of the trace.
    private mutating func writes(id: String, at placedAt: Int64, client: Int) -> [TraceWrite] {
        let customer = "cust-\(random.int(in: 1_000...9_999))"
        var lines: [Line] = []
        for _ in 0..<random.int(in: 1...4) { lines.append(newLine(avoiding: lines)) }
        let updates = random.int(in: TraceWorkload.orderUpdates)
        let transitions = min(updates, Self.statuses.count - 1)
        let edits = updates - transitions
        let cancelled = random.chance(TraceWorkload.orderCancelPercent)

        var status = 0
        var time = placedAt
        var result = [put(id: id, at: time, client: client, customer: customer, lines: lines, status: status)]
        for _ in 0..<edits {
            time += random.int64(in: TraceWorkload.orderUpdateGap)
            edit(&lines)
            result.append(put(id: id, at: time, client: client, customer: customer, lines: lines, status: status))
        }
        if cancelled {
            time += random.int64(in: TraceWorkload.orderUpdateGap)
            result.append(TraceWrite(at: time, client: client, table: "orders", id: id, values: [], deleted: true))
        } else {
            for _ in 0..<transitions {
                time += random.int64(in: TraceWorkload.orderUpdateGap)
                status += 1
                result.append(put(id: id, at: time, client: client, customer: customer, lines: lines, status: status))
            }
        }
        return result.filter { $0.at < duration }
    }

    /// A cart edit: change a quantity (60%), add a line (25%) or remove one (15%), when the
    /// cart's size allows; otherwise a quantity change.
    private mutating func edit(_ lines: inout [Line]) {
        let roll = random.int(in: 0...99)
        if roll >= 85, lines.count > 1 {
            lines.remove(at: random.int(in: 0...(lines.count - 1)))
        } else if roll >= 60, roll < 85, lines.count < Self.maxItems {
            lines.append(newLine(avoiding: lines))
        } else {
            let index = random.int(in: 0...(lines.count - 1))
            let old = lines[index].qty
            var qty = random.int(in: 1...4)
            if qty >= old { qty += 1 }
            lines[index].qty = qty
        }
    }

    private mutating func newLine(avoiding lines: [Line]) -> Line {
        var sku = random.int(in: 100...999)
        while lines.contains(where: { $0.sku == sku }) { sku = random.int(in: 100...999) }
        return Line(sku: sku, qty: random.int(in: 1...5))
    }

    private func put(id: String, at time: Int64, client: Int, customer: String, lines: [Line], status: Int)
        -> TraceWrite
    {
        let cents = lines.reduce(0) { $0 + $1.qty * Self.priceCents(sku: $1.sku) }
        let items: [JSONValue] = lines.map { line in
            .object([JSONMember("sku", .string("SKU-\(line.sku)")), JSONMember("qty", .int(Int64(line.qty)))])
        }
        return TraceWrite(
            at: time, client: client, table: "orders", id: id,
            values: [.string(customer), .double(Double(cents) / 100), .string(Self.statuses[status]), .array(items)])
    }
}
