import DallyCore
import Testing

@testable import DallySync

@Suite("A batch body read straight from its bytes")
struct BatchBodyReaderTests {
    static let texts = ["", "Ada \"q\" \\ / ü ✓ 🚢", "line\nbreak\ttab\u{01}", "x", String(repeating: "long ", count: 40)]

    static func value(_ random: inout SplitMix64, depth: Int = 0) -> JSONValue {
        switch random.int(in: 0...(depth < 2 ? 7 : 5)) {
        case 0: .null
        case 1: .bool(random.chance(50))
        case 2: .int(random.pick([0, -1, 42, Int64.min, Int64.max, 1_700_000_000_000]))
        case 3: .double(random.pick([0.5, -12.25, 1e300, 3.141592653589793, -0.0]))
        case 4, 5: .string(random.pick(texts))
        case 6: .array((0..<random.int(in: 0...2)).map { _ in value(&random, depth: depth + 1) })
        default:
            .object((0..<random.int(in: 0...2)).map { JSONMember("k\($0)", value(&random, depth: depth + 1)) })
        }
    }

    static func request(_ random: inout SplitMix64) -> BatchRequest {
        let sections = (0..<random.int(in: 0...3)).map { s in
            let columns = (0..<random.int(in: 0...4)).map { "c\($0)" }
            let changes = (0..<random.int(in: 0...19)).map { r in
                let deleted = random.chance(20)
                return BatchRequest.Change(
                    id: r % 3 == 0 ? "row-\(s)-\(r)-✓" : "\(s)-\(r)", baseVersion: random.chance(50) ? nil : Int64(r),
                    updatedAt: 1_700_000_000_000 + Int64(r), deleted: deleted,
                    values: deleted ? [] : columns.map { _ in value(&random) })
            }
            return BatchRequest.Section(table: "table_\(s)", columns: columns, changes: changes)
        }
        var request = BatchRequest(
            batchID: "b-\(random.next() % 1000)", gateway: "gw-1", replica: "replica_1",
            since: TableVersions(sections.map { ($0.table, Int64($0.changes.count)) }), sections: sections)
        if random.chance(50) { request.resyncing = sections.prefix(1).map(\.table) }
        return request
    }

    @Test func theGatewaysOwnBodiesAreReadStraightFromTheBytesAsTheTreeReadsThem() throws {
        var random = SplitMix64(seed: 7)
        for _ in 0..<200 {
            let request = Self.request(&random)
            let body = request.encode()
            let read = try #require(BatchBodyReader.read(body, maxRows: 1_000))
            #expect(read == request)
            #expect(read == (try BatchRequest.decode(json(body), maxRows: 1_000)))
        }
    }

    /// Bodies another client may write: white space, members in another order, members the
    /// protocol does not know, rows before their columns. Each reads as the tree reads it; those
    /// the reader leaves to the careful decoder (an escaped op, a member named twice) too.
    @Test func bodiesWrittenOtherwiseReadAsTheTreeReadsThem() throws {
        let row = #"["r1", 3, 10, "put", "x", [1, {"a": null}]]"#
        let cases: [(text: String, straight: Bool)] = [
            (#" { "sections" : [ { "rows" : [ \#(row) ] , "columns" : [ "a" , "b" ] , "table" : "t" } ] , "replica" : "r" , "gateway" : "g" , "batch" : "b" } "#, true),
            (#"{"batch":"b","gateway":"g","replica":"r","future":{"x":[1,2]},"sections":[{"table":"t","note":"hi","columns":["a","b"],"rows":[\#(row)]}]}"#, true),
            (#"{"batch":"b","gateway":"g","replica":"r","sections":[{"table":"t","columns":[],"rows":[["r1",null,10,"delete"]]}],"resyncing":["t"]}"#, true),
            (#"{"batch":"b","gateway":"g","replica":"r","sections":[{"table":"t","columns":["a"],"rows":[["r1",null,10,"p\u0075t",1]]}]}"#, false),
            (#"{"batch":"b","batch":"c","gateway":"g","replica":"r","sections":[]}"#, false),
            (#"{"batch":"b","gateway":"g","replica":"r","sections":[{"table":"t","columns":["a"],"rows":[["r\u0031",null,10,"put",1]]}]}"#, true),
        ]
        for (text, straight) in cases {
            let body = Array(text.utf8)
            let tree = try BatchRequest.decode(json(text), maxRows: 10)
            #expect((BatchBodyReader.read(body, maxRows: 10) != nil) == straight, "\(text)")
            #expect(try BatchRequest.decode(body: body, maxRows: 10) == tree, "\(text)")
        }
    }

    /// Bodies broken at random (a byte changed to one JSON cares about, dropped, or a stretch
    /// repeated): whatever the tree makes of each, accepted or refused, the bytes' path makes the
    /// same, error for error.
    @Test func brokenBodiesEndAsTheTreeEndsThem() throws {
        var random = SplitMix64(seed: 21)
        let significant = Array(#"{}[],:"\ 0123456789-.etrufalsnputdelete"#.utf8)
        var accepted = 0
        for _ in 0..<3_000 {
            var body = Self.request(&random).encode()
            guard body.count > 2 else { continue }
            let at = random.int(in: 0...body.count - 1)
            switch random.int(in: 0...2) {
            case 0: body[at] = random.pick(significant)
            case 1: body.remove(at: at)
            default: body.insert(contentsOf: body[at..<min(body.count, at + random.int(in: 1...12))], at: at)
            }
            let tree: Result<BatchRequest, DallyError>
            do throws(DallyError) {
                let document: JSONValue
                do throws(JSONParseError) { document = try JSONParser.parse(body) } catch { throw DallyError(error) }
                tree = .success(try BatchRequest.decode(document, maxRows: 1_000))
            } catch {
                tree = .failure(error)
            }
            let bytes = Result { () throws(DallyError) in try BatchRequest.decode(body: body, maxRows: 1_000) }
            #expect(bytes == tree, "\(String(decoding: body, as: UTF8.self))")
            if case .success = tree { accepted += 1 }
        }
        // Some breaks leave a valid batch (a digit for a digit, a space): both paths met those too.
        #expect(accepted > 0)
    }

    /// Nesting: a value in a row nests as deeply as the tree allows it, and no deeper.
    @Test func aRowsValuesNestAsDeeplyAsInTheTree() throws {
        // A row's value opens the document's sixth level: 59 levels of it are the most.
        for extra in [59, 60] {
            let nested = String(repeating: "[", count: extra) + String(repeating: "]", count: extra)
            let text = #"{"batch":"b","gateway":"g","replica":"r","sections":[{"table":"t","columns":["a"],"rows":[["r1",null,1,"put",\#(nested)]]}]}"#
            let treeAccepts = (try? JSONParser.parse(text)) != nil
            #expect(treeAccepts == (extra == 59))
            #expect((BatchBodyReader.read(Array(text.utf8), maxRows: 10) != nil) == treeAccepts)
        }
    }
}
