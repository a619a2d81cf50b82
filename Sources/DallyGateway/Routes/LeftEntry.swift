import DallyCore

/// A changes-feed entry for a row that left the reader's filter or scope: the client drops its
/// copy. It carries no values, so that a row moved out of a token's scope tells the token
/// nothing of where it went:
///
/// ```json
/// {"table":"orders","id":"o1","seq":42,"left":true}
/// ```
struct LeftEntry {
    let table: String
    let id: String
    let seq: Int64

    func write(to writer: inout JSONWriter) {
        writer.raw("{\"table\":")
        writer.string(table)
        writer.raw(",\"id\":")
        writer.string(id)
        writer.raw(",\"seq\":")
        writer.int(seq)
        writer.raw(",\"left\":true}")
    }
}
