import DallyClient
import Foundation

/// A batch for `dally client batch`, read from a file or standard input in one of two shapes:
///
/// - JSON: the gateway's own batch body,
///   `{"created":[{"id","values"}],"updated":[{"id","values"}],"deleted":["id" or {"id","expected_seq"}],"all_or_nothing":false}`;
/// - NDJSON: one write per line, `{"op":"put"|"patch"|"delete","id":…,"values":{…},"expected_seq":n,"updated_at":ms}`
///   (`op` defaults to `put`), or a JSON array of such lines.
public enum BatchFile {
    /// Reads `text`; throws ``ClientInputError`` naming the line or member at fault.
    public static func parse(_ text: String) throws -> Batch<JSONValue> {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.hasPrefix("{"), let document = try? decode(Document.self, trimmed), document.isBody {
            return document.batch
        }
        if trimmed.hasPrefix("[") {
            let lines = try decode([Line].self, trimmed, what: "the JSON array of batch lines")
            return try batch(of: lines)
        }
        var lines: [Line] = []
        for (number, line) in trimmed.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = line.trimmingCharacters(in: .whitespaces)
            if line.isEmpty { continue }
            lines.append(try decode(Line.self, line, what: "line \(number + 1)"))
        }
        return try batch(of: lines)
    }

    static func batch(of lines: [Line]) throws -> Batch<JSONValue> {
        var batch = Batch<JSONValue>()
        for line in lines {
            switch line.op ?? "put" {
            case "put", "create":
                batch.create(id: line.id, line.values ?? .object([]), expectedSeq: line.expectedSeq, updatedAt: line.updatedAt)
            case "patch", "update":
                batch.update(id: line.id, line.values ?? .object([]), expectedSeq: line.expectedSeq, updatedAt: line.updatedAt)
            case "delete":
                batch.delete(id: line.id, expectedSeq: line.expectedSeq)
            case let other:
                throw ClientInputError("batch line for '\(line.id)': op '\(other)' is not put, patch or delete")
            }
        }
        return batch
    }

    static func decode<T: Decodable>(_ type: T.Type, _ text: String, what: String = "the batch") throws -> T {
        do {
            return try JSONDecoder().decode(type, from: Data(text.utf8))
        } catch let error as DecodingError {
            throw ClientInputError("\(what) is not a batch entry: \(Self.reason(error))")
        } catch {
            throw ClientInputError("\(what) is not a batch entry: \(error)")
        }
    }

    /// What is wrong, in the file's terms (Foundation's text reads "DecodingError.dataCorrupted:
    /// Data was corrupted. Debug description: …").
    static func reason(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.memberPath.isEmpty ? "the entry" : "\"" + context.memberPath + "\""
        }
        switch error {
        case .dataCorrupted(let context) where context.codingPath.isEmpty: return "not valid JSON"
        case .dataCorrupted(let context): return "\(path(context)) is not valid"
        case .keyNotFound(let key, _): return "it has no \"\(key.stringValue)\""
        case .typeMismatch(_, let context), .valueNotFound(_, let context): return "\(path(context)) has the wrong type"
        @unknown default: return "\(error)"
        }
    }

    /// One NDJSON line.
    struct Line: Decodable {
        let op: String?
        let id: String
        let values: JSONValue?
        let expectedSeq: Int64?
        let updatedAt: Int64?

        enum CodingKeys: String, CodingKey {
            case op, id, values
            case expectedSeq = "expected_seq"
            case updatedAt = "updated_at"
        }
    }

    /// A deleted entry: an id, or `{"id","expected_seq"}`.
    struct Deletion: Decodable {
        let id: String
        let expectedSeq: Int64?

        init(from decoder: any Decoder) throws {
            if let id = try? decoder.singleValueContainer().decode(String.self) {
                self.id = id
                expectedSeq = nil
            } else {
                let line = try Line(from: decoder)
                id = line.id
                expectedSeq = line.expectedSeq
            }
        }
    }

    /// The gateway's batch body.
    struct Document: Decodable {
        let created: [Line]?
        let updated: [Line]?
        let deleted: [Deletion]?
        let allOrNothing: Bool?

        enum CodingKeys: String, CodingKey {
            case created, updated, deleted
            case allOrNothing = "all_or_nothing"
        }

        var isBody: Bool { created != nil || updated != nil || deleted != nil }

        var batch: Batch<JSONValue> {
            var batch = Batch<JSONValue>()
            for line in created ?? [] {
                batch.create(id: line.id, line.values ?? .object([]), expectedSeq: line.expectedSeq, updatedAt: line.updatedAt)
            }
            for line in updated ?? [] {
                batch.update(id: line.id, line.values ?? .object([]), expectedSeq: line.expectedSeq, updatedAt: line.updatedAt)
            }
            for deletion in deleted ?? [] { batch.delete(id: deletion.id, expectedSeq: deletion.expectedSeq) }
            batch.allOrNothing = allOrNothing ?? false
            return batch
        }
    }
}
