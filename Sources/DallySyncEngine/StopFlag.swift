import Synchronization

/// Whether the engine is stopping. Set once by ``SyncEngine`` when its service ends, and read
/// by every loop and transfer: an on-demand fetch runs in a task of its own, which the
/// engine's cancellation does not reach.
final class StopFlag: Sendable {
    private let raised = Atomic<Bool>(false)

    /// True once the engine stops, or when the current task is cancelled.
    var isRaised: Bool { raised.load(ordering: .acquiring) || Task.isCancelled }

    func raise() { raised.store(true, ordering: .releasing) }
}
