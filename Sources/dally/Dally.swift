import ArgumentParser
import DallyCore
import DallyLogging
import Foundation

@main
struct Dally: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dally",
        abstract: "A network-frugal sync gateway.",
        version: DallyVersion.current,
        subcommands: [
            GatewayCommand.self, CloudCommand.self, DevCommand.self, BackupCommand.self, ClientCommand.self, BenchCommand.self,
        ]
    )

    /// As ArgumentParser's, but a usage error (a bad flag, a missing argument, a failed
    /// validation) exits 2, the code `dally` uses for input it refuses (configuration errors
    /// too), rather than sysexits' 64.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure {
                let message = fullMessage(for: error)
                StandardError.line(message)
                Foundation.exit(2)
            }
            exit(withError: error)
        }
    }
}
