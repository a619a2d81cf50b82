import DallyClient

/// The exit codes of `dally client`, documented in docs/CLIENT.md and `--help`.
public enum ClientExitCode {
    /// Done.
    public static let ok: Int32 = 0
    /// The gateway refused (its code is printed), a downloaded object failed its hash check, or
    /// a local file could not be read or written.
    public static let refused: Int32 = 1
    /// Bad flags or arguments, or input that is not the JSON expected.
    public static let usage: Int32 = 2
    /// The gateway could not be reached.
    public static let unreachable: Int32 = 3

    /// The exit code for an error a command ends with.
    public static func of(_ error: any Error) -> Int32 {
        switch error {
        case DallyClientError.unreachable: unreachable
        case is DallyClientError: refused
        case is ClientInputError: usage
        default: refused
        }
    }

    /// Help text naming the codes.
    public static let help = "Exit codes: 0 ok, 1 error from the gateway, 2 usage, 3 gateway unreachable."
}
