import DallyCore
import Testing

@Suite("Identifier")
struct IdentifierTests {
    @Test(arguments: ["a", "orders", "_", "_private", "A", "Orders2", "snake_case_123", String(repeating: "n", count: 63)])
    func validNames(_ name: String) {
        #expect(Identifier.isValidName(name))
    }

    @Test(arguments: [
        "", "1orders", "9", "a-b", "a b", "a.b", "a:b", "café", "naïve", "a$", "\"a\"", "a;drop", " a", "a\n",
        String(repeating: "n", count: 64),
    ])
    func invalidNames(_ name: String) {
        #expect(!Identifier.isValidName(name))
    }

    @Test(arguments: [
        "a", "0", "-", "~", "a.b:c~d-e_f", "550e8400-e29b-41d4-a716-446655440000", "01ARZ3NDEKTSV4RRFFQ69G5FAV",
        "507f1f77bcf86cd799439011", "user:42", String(repeating: "x", count: 128),
    ])
    func validRowIDs(_ id: String) {
        #expect(Identifier.isValidRowID(id))
    }

    @Test(arguments: [
        "", String(repeating: "x", count: 129), "a/b", "a b", "a%20b", "a\"b", "a'b", "a?b", "a#b", "a+b", "a\\b",
        "é", "a\u{0}", "a\n", "a,b",
    ])
    func invalidRowIDs(_ id: String) {
        #expect(!Identifier.isValidRowID(id))
    }

    /// Row ids are promised to be usable in URLs and file names without escaping, but "." and
    /// ".." are dot segments that URL clients normalise away and that name directories.
    @Test(arguments: [".", ".."])
    func dotSegmentsAreNotRowIDs(_ id: String) {
        #expect(!Identifier.isValidRowID(id))
    }

    @Test func limits() {
        #expect(Identifier.maxRowIDLength == 128)
        #expect(Identifier.maxNameLength == 63)
    }

    @Test func reservedColumnNames() {
        for name in ["id", "seq", "updated_at", "deleted", "version", "conflict", "values", "expected_seq"] {
            #expect(Identifier.reservedColumnNames.contains(name), "\(name)")
        }
        #expect(!Identifier.reservedColumnNames.contains("customer"))
    }
}
