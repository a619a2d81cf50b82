import DallyCore

/// Valid JSON documents made invalid in meaning, one member at a time, from a seed: what a
/// buggy or hostile client sends. A value is swapped for an extreme (Int64's ends, numbers past
/// them, NUL, times past year 9999, deep and empty containers), a member or element removed, or
/// one added. Tests send the results and hold the server to an answer for each.
///
/// ```swift
/// var random = SplitMix64(seed: 7)
/// let body = JSONMutations.mutate(.object([JSONMember("qty", .int(2))]), &random)
/// ```
public enum JSONMutations {
    /// What a mutation puts in place of a value.
    public static let extremes: [JSONValue] = [
        .null, .bool(false), .int(0), .int(-1), .int(.max), .int(.min), .double(9.3e18), .double(-9.3e18),
        .double(1e308), .double(5e-324), .string(""), .string("\u{0}"), .string(String(repeating: "x", count: 3_000)),
        .string("9999-12-31T23:59:59.999Z"), .string("10000-01-01T00:00:00Z"), .int(253_402_300_800_000), .array([]),
        .object([]), .array([.array([.array([])])]), .string("orders"), .string("put"), .string("delete"),
    ]

    /// `value` with one of its leaves (or members, or elements) replaced, removed or added.
    public static func mutate(_ value: JSONValue, _ random: inout SplitMix64) -> JSONValue {
        switch value {
        case .object(var members) where !members.isEmpty:
            let i = random.int(in: 0...(members.count - 1))
            switch random.int(in: 0...9) {
            case 0: members.remove(at: i)
            case 1: members.append(JSONMember("extra", extreme(&random)))
            default: members[i].value = mutate(members[i].value, &random)
            }
            return .object(members)
        case .array(var elements) where !elements.isEmpty:
            let i = random.int(in: 0...(elements.count - 1))
            switch random.int(in: 0...9) {
            case 0: elements.remove(at: i)
            case 1: elements.append(extreme(&random))
            default: elements[i] = mutate(elements[i], &random)
            }
            return .array(elements)
        default:
            return extreme(&random)
        }
    }

    /// `value` mutated one to three times.
    public static func mutated(_ value: JSONValue, _ random: inout SplitMix64) -> JSONValue {
        var value = value
        for _ in 0..<random.int(in: 1...3) { value = mutate(value, &random) }
        return value
    }

    private static func extreme(_ random: inout SplitMix64) -> JSONValue {
        extremes[random.int(in: 0...(extremes.count - 1))]
    }
}
