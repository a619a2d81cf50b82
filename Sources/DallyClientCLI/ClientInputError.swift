/// Input the command line cannot use: a values argument that is not a JSON object, a batch
/// line that is not an entry. Exit code 2.
public struct ClientInputError: Error, CustomStringConvertible {
    /// What is wrong with the input, for the person who typed it.
    public let description: String

    /// An input error saying `description`.
    public init(_ description: String) { self.description = description }
}
