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
/// accepts it. The cloud's entry point from the body's bytes (``BatchRequest/decode(body:maxRows:)``,
/// read straight from them when well formed) must raise the same error, word for word.
func batchRefusal(_ text: String, maxRows: Int = 100, sourceLocation: SourceLocation = #_sourceLocation) throws
    -> DallyError?
{
    let document = try json(text)
    var refusal: DallyError?
    do {
        let request = try BatchRequest.decode(document, maxRows: maxRows)
        Issue.record("accepted a malformed batch: \(request)", sourceLocation: sourceLocation)
    } catch {
        refusal = error
    }
    do {
        let request = try BatchRequest.decode(body: Array(text.utf8), maxRows: maxRows)
        Issue.record("accepted a malformed batch from its bytes: \(request)", sourceLocation: sourceLocation)
    } catch {
        #expect(error == refusal, "the body's bytes and its tree refused alike", sourceLocation: sourceLocation)
    }
    return refusal
}

/// A minimal, valid batch with the given sections (JSON text of the `sections` array).
func batchText(batch: String = "\"b1\"", sections: String) -> String {
    "{\"batch\":\(batch),\"gateway\":\"gw\",\"replica\":\"rep-1\",\"since\":{},\"sections\":\(sections)}"
}
