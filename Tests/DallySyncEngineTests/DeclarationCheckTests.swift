import DallyCore
import DallySync
import Logging
import Synchronization
import Testing

@testable import DallySyncEngine

/// The declaration check's state, with the cloud's answers given by the test: what a check
/// holds back, when it asks again, and what a sync-now releases for whom.
@Suite("DeclarationCheck")
struct DeclarationCheckTests {
    static func items(_ columns: [String]) -> TableSchema {
        TableSchema(
            name: "items", columns: columns.map { Column(name: $0, type: .text) }, conflict: .lastWriterWins,
            policy: SyncPolicy(
                localOnly: false, atomicSync: false,
                uploadRows: UploadPolicy(maxDelay: .seconds(60), networks: ["wired"]),
                uploadObjects: UploadPolicy(maxDelay: .seconds(600), networks: ["wired"]),
                downloadRows: DownloadPolicy(period: .seconds(60), networks: ["wired"]),
                downloadObjects: DownloadPolicy(period: .seconds(600), networks: ["wired"])))
    }

    /// A gateway declaring `items` with `size`, against a cloud node that lacks it.
    static func check() -> DeclarationCheck {
        DeclarationCheck(schemas: [items(["name", "size"])], now: { 0 }, logger: Logger(label: "test"))
    }

    static let lacking = TableDeclarations(schemas: [items(["name"])])
    static let agreeing = TableDeclarations(schemas: [items(["name", "size"])])

    /// How many times the cloud was asked.
    final class Asks: Sendable {
        private let count = Mutex(0)
        func add() { count.withLock { $0 += 1 } }
        var total: Int { count.withLock { $0 } }
    }

    /// An ask that answers `declarations` from `node` and counts itself.
    static func ask(_ declarations: TableDeclarations, node: String = "http://a", asked: Asks)
        -> @Sendable () async throws -> (TableDeclarations?, node: String)
    {
        {
            asked.add()
            return (declarations, node)
        }
    }

    @Test("a check returns what its answer holds; while all agree, it asks once")
    func aCheckReturnsItsAnswersHolds() async throws {
        let asked = Asks()
        let check = Self.check()
        let held = try await check.checkIfDue(node: nil, ask: Self.ask(Self.lacking, asked: asked))
        #expect(held.uploads == ["items"] && held.pulls.isEmpty)
        #expect(check.heldForDecisions.uploads == ["items"])

        let agreeing = DeclarationCheck(schemas: [Self.items(["name", "size"])], now: { 0 }, logger: Logger(label: "test"))
        #expect(try await agreeing.checkIfDue(node: nil, ask: Self.ask(Self.agreeing, asked: asked)) == .init())
        #expect(try await agreeing.checkIfDue(node: nil, ask: Self.ask(Self.agreeing, asked: asked)) == .init())
        #expect(asked.total == 2, "one ask each; the agreeing gateway's second check asked nothing")
    }

    /// A sync-now (``DeclarationCheck/askAgain()``) releases a held table for the decision
    /// loop, so that its request is not dropped before a wake asks; the wake's own check asks
    /// and hands it the answer's holds. A wake that read the decision loop's view after its
    /// check once sent a held table's row, when a sync-now came between the two.
    @Test("a sync-now releases a held table for the decision loop only; the wake's check asks again and holds it")
    func aSyncNowReleasesForTheDecisionLoopOnly() async throws {
        let asked = Asks()
        let check = Self.check()
        #expect(try await check.checkIfDue(node: nil, ask: Self.ask(Self.lacking, asked: asked)).uploads == ["items"])
        check.askAgain()
        #expect(check.heldForDecisions.uploads.isEmpty)
        let held = try await check.checkIfDue(node: nil, ask: Self.ask(Self.lacking, asked: asked))
        #expect(held.uploads == ["items"])
        #expect(asked.total == 2)
        // A sync-now right after the wake's check: the decision loop sees the table released,
        // the holds the wake was handed stay what the answer said.
        check.askAgain()
        #expect(check.heldForDecisions.uploads.isEmpty)
        #expect(held.uploads == ["items"])
    }

    @Test("requests moved to a node whose answer is not held: the check asks it, and its answer replaces the last")
    func aMoveToAnotherNodeAsksIt() async throws {
        let asked = Asks()
        let check = Self.check()
        let first = try await check.checkIfDue(node: "http://a", ask: Self.ask(Self.agreeing, node: "http://a", asked: asked))
        #expect(first == .init())
        #expect(try await check.checkIfDue(node: "http://a", ask: Self.ask(Self.agreeing, asked: asked)) == .init())
        #expect(asked.total == 1)
        let moved = try await check.checkIfDue(node: "http://b", ask: Self.ask(Self.lacking, node: "http://b", asked: asked))
        #expect(moved.uploads == ["items"])
        #expect(asked.total == 2)
    }
}
