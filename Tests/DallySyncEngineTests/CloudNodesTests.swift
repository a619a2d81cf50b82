import DallyTestSupport
import Logging
import Synchronization
import Testing

@testable import DallySyncEngine

@Suite("CloudNodes: which cloud node requests go to")
struct CloudNodesTests {
    let start = ContinuousClock.now

    @Test func requestsMoveToTheNextNodeWhenOneFailsAndRoundAgain() {
        let nodes = CloudNodes(urls: ["http://a", "http://b", "http://c"], returnAfter: .seconds(60))
        #expect(nodes.current(now: start) == "http://a")
        #expect(nodes.failed("http://a", now: start) == "http://b")
        #expect(nodes.failed("http://b", now: start) == "http://c")
        #expect(nodes.failed("http://c", now: start) == "http://a")
        #expect(nodes.current(now: start + .seconds(1)) == "http://a")
    }

    @Test func aFailureOnANodeAlreadyLeftMovesNothing() {
        let nodes = CloudNodes(urls: ["http://a", "http://b"])
        nodes.failed("http://a", now: start)
        // A long-poll to `a` that was under way fails late: requests stay on `b`.
        #expect(nodes.failed("http://a", now: start) == "http://b")
        #expect(nodes.current(now: start) == "http://b")
    }

    @Test func theFirstNodeIsTriedAgainAfterAWhile() {
        let nodes = CloudNodes(urls: ["http://a", "http://b"], returnAfter: .seconds(60))
        nodes.failed("http://a", now: start)
        #expect(nodes.current(now: start + .seconds(59)) == "http://b")
        #expect(nodes.current(now: start + .seconds(60)) == "http://a")
        #expect(nodes.current(now: start + .seconds(61)) == "http://a")
    }

    @Test func oneNodeStaysTheNodeWhateverFails() {
        let nodes = CloudNodes(urls: ["http://a"])
        #expect(nodes.failed("http://a", now: start) == "http://a")
        #expect(nodes.current(now: start) == "http://a")
    }

    @Test func eachMoveIsCountedAndToldAndSoIsTheWayBack() {
        let told = ToldLines()
        let logger = told.logger()
        let nodes = CloudNodes(urls: ["http://a", "http://b"], returnAfter: .seconds(60), logger: logger)
        #expect(nodes.position == ("http://a", 0))
        nodes.failed("http://a", now: start)
        nodes.failed("http://a", now: start)
        #expect(nodes.position == ("http://b", 1))
        #expect(told.lines == ["warning a cloud node did not answer or cannot serve: requests go to the next failed=http://a node=http://b"])
        #expect(nodes.current(now: start + .seconds(60)) == "http://a")
        #expect(nodes.position == ("http://a", 1))
        #expect(told.lines.last == "notice requests go back to the first cloud node node=http://a")
    }

    /// With every node down, one round of the list is told, then nothing until one answers.
    @Test func aCloudDownAsAWholeIsToldOnceRoundNotAtEveryProbe() {
        let told = ToldLines()
        let logger = told.logger()
        let nodes = CloudNodes(urls: ["http://a", "http://b"], returnAfter: .seconds(60), logger: logger)
        for _ in 0..<10 { nodes.failed(nodes.current(now: start), now: start) }
        #expect(nodes.position.moves == 10)
        #expect(told.lines.count == 2)
        nodes.answered()
        nodes.failed(nodes.current(now: start), now: start)
        #expect(told.lines.count == 3)
    }
}
