import ArgumentParser
import DallyCore

@main
struct Dally: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dally",
        abstract: "A network-frugal sync gateway.",
        version: DallyVersion.current,
        subcommands: [GatewayCommand.self, CloudCommand.self, DevCommand.self, BackupCommand.self]
    )
}
