import DallyCore
import Testing

@testable import DallySync

@Suite("Conflict rule")
struct ConflictRuleTests {
    static let current = ConflictRule.Current(version: 5, updatedAt: 1_000)

    @Test(arguments: ConflictPolicy.allCases)
    func aRowTheCloudDoesNotHaveAlwaysApplies(_ policy: ConflictPolicy) {
        #expect(ConflictRule.decide(policy: policy, baseVersion: nil, updatedAt: 0, current: nil) == .apply)
        // Even a change that claims a base (the cloud forgot the row, or it is a retry) applies.
        #expect(ConflictRule.decide(policy: policy, baseVersion: 9, updatedAt: 0, current: nil) == .apply)
    }

    @Test(arguments: ConflictPolicy.allCases)
    func aChangeBasedOnTheCurrentVersionApplies(_ policy: ConflictPolicy) {
        // Whatever the clocks say: the writer saw the row as it is.
        #expect(ConflictRule.decide(policy: policy, baseVersion: 5, updatedAt: 1, current: Self.current) == .apply)
        #expect(ConflictRule.decide(policy: policy, baseVersion: 5, updatedAt: 9_999, current: Self.current) == .apply)
    }

    @Test func serverWinsKeepsTheCloudRowWhenTheBaseIsOlder() {
        #expect(
            ConflictRule.decide(policy: .serverWins, baseVersion: 3, updatedAt: 9_999, current: Self.current)
                == .conflict(.server))
    }

    @Test func clientWinsAppliesOverTheCloudRowWhenTheBaseIsOlder() {
        #expect(
            ConflictRule.decide(policy: .clientWins, baseVersion: 3, updatedAt: 1, current: Self.current)
                == .conflict(.client))
    }

    @Test func manualLeavesTheConflictToAnAppWhenTheBaseIsOlder() {
        #expect(
            ConflictRule.decide(policy: .manual, baseVersion: 3, updatedAt: 9_999, current: Self.current)
                == .conflict(.none))
    }

    @Test func lastWriterWinsGoesByTheWritersClocksAndTiesGoToTheCloud() {
        #expect(
            ConflictRule.decide(policy: .lastWriterWins, baseVersion: 3, updatedAt: 1_001, current: Self.current)
                == .conflict(.client))
        #expect(
            ConflictRule.decide(policy: .lastWriterWins, baseVersion: 3, updatedAt: 999, current: Self.current)
                == .conflict(.server))
        #expect(
            ConflictRule.decide(policy: .lastWriterWins, baseVersion: 3, updatedAt: 1_000, current: Self.current)
                == .conflict(.server))
    }

    @Test func aRowCreatedOnBothSidesIsAConflict() {
        // No base: the gateway created the row, but the cloud already has one with that id.
        #expect(
            ConflictRule.decide(policy: .serverWins, baseVersion: nil, updatedAt: 2_000, current: Self.current)
                == .conflict(.server))
        #expect(
            ConflictRule.decide(policy: .lastWriterWins, baseVersion: nil, updatedAt: 2_000, current: Self.current)
                == .conflict(.client))
        #expect(
            ConflictRule.decide(policy: .manual, baseVersion: nil, updatedAt: 2_000, current: Self.current)
                == .conflict(.none))
    }
}

@Suite("Values on the sync wire")
struct WireValueTests {
    static let object = Column(name: "photo", type: .object)

    @Test func anObjectColumnTakesAReferenceOldReferenceTextOrNull() throws {
        let hash = String(repeating: "ab", count: 32)
        // Kept as canonical JSON text: members in order, hex in lowercase.
        let reference: JSONValue = ["chunks": 2, "size": 10, "hash": .string(hash.uppercased())]
        #expect(try Value(wire: reference, for: Self.object) == .json(#"{"hash":"\#(hash)","size":10,"chunks":2}"#))
        #expect(try Value(wire: "objects/sha256-ab12", for: Self.object) == .text("objects/sha256-ab12"))
        #expect(try Value(wire: nil, for: Self.object) == .null)
        // The local API refuses values for OBJECT columns; the sync wire carries the reference.
        #expect(throws: DallyError.self) { try Value(json: "objects/sha256-ab12", for: Self.object) }
    }

    @Test(arguments: [JSONValue.int(3), .bool(true), .double(1.5), ["a": 1], ["hash": "ab12", "size": 1, "chunks": 1], [1, 2]])
    func anObjectColumnRefusesAnythingButAReferenceOrAString(_ value: JSONValue) {
        do {
            let read = try Value(wire: value, for: Self.object)
            Issue.record("accepted \(value) as \(read)")
        } catch {
            #expect(error.code == .wrongType)
            #expect(error.field == "photo")
            if case .object = value {
                #expect(error.message.contains("object reference"))
            } else {
                #expect(error.message.contains(value.typeName))
            }
        }
    }

    @Test func otherColumnsReadAsInTheLocalAPI() throws {
        #expect(try Value(wire: "Ada", for: Column(name: "c", type: .text)) == .text("Ada"))
        #expect(try Value(wire: 7, for: Column(name: "c", type: .integer)) == .integer(7))
        #expect(try Value(wire: 7, for: Column(name: "c", type: .real)) == .real(7))
        #expect(try Value(wire: "AQID", for: Column(name: "c", type: .blob)) == .blob([1, 2, 3]))
        #expect(try Value(wire: ["k": [1, nil]], for: Column(name: "c", type: .json)) == .json(#"{"k":[1,null]}"#))
        do {
            _ = try Value(wire: "7", for: Column(name: "n", type: .integer))
            Issue.record("a string was accepted for an INTEGER column")
        } catch {
            #expect(error.code == .wrongType)
            #expect(error.field == "n")
        }
    }

    @Test func valuesGoOutInTheirWireShapeAndComeBackTheSame() throws {
        let cases: [(Value, Column, JSONValue)] = [
            (.null, Column(name: "c", type: .text), nil),
            (.text("x"), Column(name: "c", type: .text), "x"),
            (.integer(-4), Column(name: "c", type: .integer), -4),
            (.real(2.5), Column(name: "c", type: .real), 2.5),
            (.boolean(false), Column(name: "c", type: .boolean), false),
            (.blob([0, 255, 16]), Column(name: "c", type: .blob), "AP8Q"),
            (.json(#"{"a":[true]}"#), Column(name: "c", type: .json), ["a": [true]]),
            (.text("objects/r1"), Self.object, "objects/r1"),
            (
                .json(#"{"hash":"\#(String(repeating: "0f", count: 32))","size":3,"chunks":1}"#), Self.object,
                ["hash": .string(String(repeating: "0f", count: 32)), "size": 3, "chunks": 1]
            ),
        ]
        for (value, column, wire) in cases {
            #expect(value.wireJSON == wire)
            #expect(try Value(wire: value.wireJSON, for: column) == value)
        }
    }
}

@Suite("Batch fingerprint")
struct FingerprintTests {
    @Test func isFNV1a64() {
        #expect(Fingerprint.of([]) == 0xcbf2_9ce4_8422_2325)
        #expect(Fingerprint.of(Array("a".utf8)) == 0xaf63_dc4c_8601_ec8c)
        #expect(Fingerprint.of(Array("foobar".utf8)) == 0x8594_4171_f739_67e8)
    }

    @Test func differsForDifferentBodiesAndMatchesForTheSame() {
        let request = BatchRequest(
            batchID: "b1", gateway: "g", replica: "r", since: TableVersions([("t", 1)]),
            sections: [
                BatchRequest.Section(
                    table: "t", columns: ["v"],
                    changes: [BatchRequest.Change(id: "x", baseVersion: nil, updatedAt: 1, deleted: false, values: [1])])
            ])
        var changed = request
        changed.sections[0].changes[0].values = [2]
        var reordered = request
        reordered.since = TableVersions([("t", 2)])

        let base = Fingerprint.of(request.encode())
        #expect(base == Fingerprint.of(request.encode()))
        #expect(base != Fingerprint.of(changed.encode()))
        #expect(base != Fingerprint.of(reordered.encode()))
        #expect(Fingerprint.of(Array("ab".utf8)) != Fingerprint.of(Array("ba".utf8)))
    }
}
