import DallyCore
import Testing

@testable import DallySync

/// Parses JSON text written in a test; a typo in a test is a test failure, not a crash.
func json(_ text: String) throws -> JSONValue {
    try JSONParser.parse(text)
}

/// Encoded bytes parsed back into a document, as the receiving side would.
func json(_ bytes: [UInt8]) throws -> JSONValue {
    try JSONParser.parse(bytes)
}

/// The error `BatchRequest.decode` raises for `text`, or nil (recorded as an issue) when it
/// accepts it.
func batchRefusal(_ text: String, maxRows: Int = 100, sourceLocation: SourceLocation = #_sourceLocation) throws
    -> DallyError?
{
    let document = try json(text)
    do {
        let request = try BatchRequest.decode(document, maxRows: maxRows)
        Issue.record("accepted a malformed batch: \(request)", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

/// A minimal, valid batch with the given sections (JSON text of the `sections` array).
func batchText(batch: String = "\"b1\"", sections: String) -> String {
    "{\"batch\":\(batch),\"gateway\":\"gw\",\"replica\":\"rep-1\",\"since\":{},\"sections\":\(sections)}"
}
