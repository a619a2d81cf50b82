import DallyClient
import DallyClientCLI
import Testing

/// The command line's progress bar: drawn only on a terminal, and what a line says.
@Suite struct ProgressBarTests {
    @Test func noBarWhenNotATerminal() {
        #expect(ProgressBar(label: "x", enabled: false).handler == nil)
        #expect(ProgressBar(label: "x", enabled: true).handler != nil)
    }

    @Test func aLineShowsTheShareDone() {
        let half = ProgressBar.line("cat.jpg", TransferProgress(completed: 5_000_000, total: 10_000_000))
        #expect(half == "cat.jpg [###############---------------]  50%  5.0 MB / 10.0 MB")
        let unknown = ProgressBar.line("stdin", TransferProgress(completed: 1_500_000, total: nil))
        #expect(unknown == "stdin 1.5 MB")
        let done = ProgressBar.line("f", TransferProgress(completed: 0, total: 0))
        #expect(done.contains("100%"))
    }
}
