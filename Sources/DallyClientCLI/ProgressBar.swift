import DallyClient
import DallyLogging
import Foundation
import Synchronization

/// A one-line progress bar on standard error, redrawn at most every tenth of a second and only
/// when standard error is a terminal: a script or a pipe sees no bar.
public final class ProgressBar: Sendable {
    private struct State {
        var lastDraw: ContinuousClock.Instant?
        var drawn = false
    }

    private let label: String
    private let enabled: Bool
    private let state = Mutex(State())

    /// A bar titled `label`, drawn only if `enabled` (by default: standard error is a terminal).
    public init(label: String, enabled: Bool = isatty(STDERR_FILENO) == 1) {
        self.label = label
        self.enabled = enabled
    }

    /// The handler to give a transfer; nil when no bar is drawn.
    public var handler: ProgressHandler? {
        guard enabled else { return nil }
        return { [self] progress in self.update(progress) }
    }

    func update(_ progress: TransferProgress) {
        let now = ContinuousClock.now
        let draw = state.withLock { state in
            let last = progress.total == progress.completed
            if let previous = state.lastDraw, now - previous < .milliseconds(100), !last { return false }
            state.lastDraw = now
            state.drawn = true
            return true
        }
        if draw { StandardError.write(Data(("\r" + Self.line(label, progress)).utf8)) }
    }

    /// Ends the bar's line, if one was drawn.
    public func finish() {
        let drawn = state.withLock { state in
            defer { state.drawn = false }
            return state.drawn
        }
        if drawn { StandardError.write(Data("\n".utf8)) }
    }

    /// `label [#########-----------]  45%  12.3 MB / 27.0 MB`.
    public static func line(_ label: String, _ progress: TransferProgress) -> String {
        let width = 30
        let megabytes = { (bytes: Int64) in String(format: "%.1f MB", Double(bytes) / 1_000_000) }
        guard let fraction = progress.fraction, let total = progress.total else {
            return "\(label) \(megabytes(progress.completed))"
        }
        let filled = Int((fraction * Double(width)).rounded(.down))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        return "\(label) [\(bar)] \(String(format: "%3d", Int(fraction * 100)))%  \(megabytes(progress.completed)) / \(megabytes(total))"
    }
}
