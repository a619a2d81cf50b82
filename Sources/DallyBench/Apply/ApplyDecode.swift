import DallyCore
import DallySync

/// The part of `dally-bench apply` that times what the cloud does to a batch's body before the
/// store sees it: decoding it, both ways the cloud can (no HTTP, no decompression, no store).
///
/// - `decode`: ``BatchRequest/decode(body:maxRows:)``, as the cloud's route decodes (a well-formed
///   body read straight from its bytes);
/// - `decode tree`: the body parsed into a `JSONValue` tree and decoded from it, as the cloud
///   did before 2026-11-29 and still does for a body it must name a problem in.
enum ApplyDecode {
    static func straight(_ batches: [BatchRequest]) throws -> ApplyResult {
        try measure(batches, name: "decode", label: "decode (from the bytes)") { body throws(DallyError) in
            try BatchRequest.decode(body: body, maxRows: .max)
        }
    }

    static func tree(_ batches: [BatchRequest]) throws -> ApplyResult {
        try measure(batches, name: "decode-tree", label: "decode (through a tree)") { body throws(DallyError) in
            let document: JSONValue
            do throws(JSONParseError) {
                document = try JSONParser.parse(body)
            } catch {
                throw DallyError(error)
            }
            return try BatchRequest.decode(document, maxRows: .max)
        }
    }

    private static func measure(
        _ batches: [BatchRequest], name: String, label: String,
        _ decode: ([UInt8]) throws(DallyError) -> BatchRequest
    ) throws -> ApplyResult {
        let bodies = batches.map { $0.encode() }
        var samples = Samples()
        let clock = ContinuousClock()
        for (batch, body) in zip(batches, bodies) {
            let start = clock.now
            let decoded = try decode(body)
            samples.add(clock.now - start)
            guard decoded.rowCount == batch.rowCount else { throw DallyError(.badRequest, "decoded a batch wrong") }
        }
        let bytes = bodies.reduce(0) { $0 + $1.count }
        return ApplyResult(
            name: name, label: label, rows: batches.reduce(0) { $0 + $1.rowCount }, seconds: samples.total / 1000,
            perBatch: samples, notes: "\(bytes / max(batches.count, 1)) bytes of JSON a batch")
    }
}
