import ArgumentParser

@main
struct Dally: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dally",
        abstract: "A network-frugal sync gateway.",
        subcommands: [GatewayCommand.self, CloudCommand.self, DevCommand.self]
    )
}
