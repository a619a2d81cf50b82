import DallyCore

/// What an `OBJECT` column holds: which object, how large, in how many chunks.
///
/// A row carries only this reference (in its JSON as `{"hash": "…", "size": n, "chunks": k}`);
/// the bytes live in the chunk store and travel on their own. Two rows whose objects have the
/// same content share one object.
public struct ObjectReference: Sendable, Hashable {
    /// The SHA-256 of the object's content.
    public let hash: ContentHash
    /// The object's length in bytes.
    public let size: Int64
    /// How many chunks it is stored in.
    public let chunks: Int

    public init(hash: ContentHash, size: Int64, chunks: Int) {
        self.hash = hash
        self.size = size
        self.chunks = chunks
    }

    /// The reference as a row stores and shows it: compact JSON, members in this order.
    public var jsonText: String { json.jsonText }

    public var json: JSONValue {
        .object([
            JSONMember("hash", .string(hash.hex)), JSONMember("size", .int(size)),
            JSONMember("chunks", .int(Int64(chunks))),
        ])
    }

    /// Reads a stored or received reference (`{"hash", "size", "chunks"}`).
    ///
    /// - Throws: ``DallyError`` `wrong_type` naming `field` when the value is not a reference.
    public init(json: JSONValue, field: String) throws(DallyError) {
        guard case .string(let hex)? = json["hash"], let hash = ContentHash(hex: hex),
            case .int(let size)? = json["size"], size >= 0,
            case .int(let chunks)? = json["chunks"], chunks >= 0,
            chunks <= Int64(Int32.max)
        else {
            throw DallyError(
                .wrongType,
                "column '\(field)' expects an object reference {\"hash\": 64 hex digits, \"size\": n, \"chunks\": k}",
                field: field)
        }
        self.init(hash: hash, size: size, chunks: Int(chunks))
    }

    /// Reads a reference from its stored text; nil when the text is not one.
    public init?(jsonText: String) {
        guard let json = try? JSONParser.parse(jsonText), let reference = try? ObjectReference(json: json, field: "")
        else { return nil }
        self = reference
    }

    /// The hash a client names in a row write: `{"hash": "…"}` (size and chunks may be given
    /// too; the gateway fills them in from the object it holds).
    ///
    /// - Throws: ``DallyError`` `wrong_type` naming `field`.
    public static func requestedHash(_ json: JSONValue, field: String) throws(DallyError) -> ContentHash {
        guard case .string(let hex)? = json["hash"], let hash = ContentHash(hex: hex)
        else {
            throw DallyError(
                .wrongType,
                "column '\(field)' is an OBJECT column: give {\"hash\": \"<64 hex digits>\"} of an object uploaded to this gateway (POST /v1/objects), or null",
                field: field)
        }
        return hash
    }
}
