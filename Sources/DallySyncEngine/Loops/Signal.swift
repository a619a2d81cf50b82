import DallyCore
import Synchronization

/// A broadcast that can fire many times: each wait ends at the next firing after it began (or
/// when its task is cancelled). Built on DallyCore's ``VersionWatch``: a firing is a new
/// version of one key, so a firing between the start of a wait and its parking is not lost.
final class Signal: Sendable {
    private static let key = "fired"
    private let watch = VersionWatch(versions: [:])
    private let firings = Atomic<Int64>(0)

    func wait() async {
        let held = firings.load(ordering: .acquiring)
        _ = try? await watch.wait(Waiter(), holding: [Self.key: held], until: nil)
    }

    func fire() {
        let firing = firings.add(1, ordering: .acquiringAndReleasing).newValue
        watch.publish([(Self.key, firing)])
    }
}
