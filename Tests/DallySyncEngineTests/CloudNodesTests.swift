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
}
