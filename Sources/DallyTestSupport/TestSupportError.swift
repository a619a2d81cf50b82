/// Why a test harness could not set something up; the message says what is missing.
public struct TestSupportError: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) { self.description = description }
}
