import DallyCore

/// A changes-feed entry for a row that left the reader's filter or scope: the client drops its
/// copy. It is shaped as a tombstone with `"left":true` added, so that a client that knows
/// nothing of filters drops the row as it would a deleted one; it carries no values and no
/// version, so that a row moved out of a token's scope tells the token nothing of where it went:
///
/// ```json
/// {"table":"orders","id":"o1","seq":42,"updated_at":1764000000000,"deleted":true,"version":null,"values":{},"left":true}
/// ```
struct LeftEntry {
    let table: String
    let id: String
    let seq: Int64
    let updatedAt: Int64

    func write(to writer: inout JSONWriter) {
        writer.raw("{\"table\":")
        writer.string(table)
        writer.raw(",\"id\":")
        writer.string(id)
        writer.raw(",\"seq\":")
        writer.int(seq)
        writer.raw(",\"updated_at\":")
        writer.int(updatedAt)
        writer.raw(",\"deleted\":true,\"version\":null,\"values\":{},\"left\":true}")
    }
}
