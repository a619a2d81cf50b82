import ArgumentParser
import DallyClientCLI

/// `dally client`: the gateway's API from the command line, on the DallyClient library.
struct ClientCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "client",
        abstract: "Read and write a running gateway: rows, changes, objects, sync, conflicts, stats.",
        discussion: """
            The gateway is --url or DALLY_URL (default \(ClientSession.defaultURL)); the bearer token is \
            --token or DALLY_TOKEN. --output json prints one JSON document per line (keys sorted); \
            --output table aligns columns for people.

            \(ClientExitCode.help)

            Example:
              export DALLY_URL=http://127.0.0.1:8080 DALLY_TOKEN=dev-client-token-change-me
              dally client put orders o1 '{"customer":"Ada","total":12.5}'
              dally client rows orders --where paid:false --output table
              dally client watch orders
            """,
        subcommands: [
            ClientPut.self, ClientPatch.self, ClientGet.self, ClientDelete.self, ClientRows.self, ClientWatch.self,
            ClientBatch.self, ClientSync.self, ClientConflicts.self, ClientObject.self, ClientStats.self,
            ClientUplinks.self,
        ]
    )
}
