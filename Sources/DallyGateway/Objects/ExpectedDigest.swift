import DallyCore
import DallyObjects
import Foundation
import Hummingbird

/// The SHA-256 a client says an upload has: `Dally-Object-Sha256: <64 hex digits>` or
/// RFC 9530's `Repr-Digest: sha-256=:<base64>:`.
///
/// Checked once the whole body is hashed, so that bytes damaged on the way (or a client that
/// sent the wrong file) are refused with `hash_mismatch` instead of stored under another name.
enum ExpectedDigest {
    /// The headers' names, lowercase (as HTTP/2 and `HTTPField.Name.canonicalName` spell them).
    static let objectSHA256 = "dally-object-sha256"
    static let reprDigest = "repr-digest"

    /// The hash the headers name; nil when they name none (a `Repr-Digest` with only other
    /// algorithms names none).
    ///
    /// - Throws: ``DallyError`` `bad_request` for a header that is not well formed, or two
    ///   that disagree.
    static func read(_ headers: HTTPFields) throws(DallyError) -> ContentHash? {
        var hex: ContentHash?
        if let value = field(objectSHA256, in: headers) {
            guard let hash = ContentHash(hex: value.trimmingCharacters(in: .whitespaces)) else {
                throw DallyError(.badRequest, "Dally-Object-Sha256 must be 64 hex digits", field: "Dally-Object-Sha256")
            }
            hex = hash
        }
        var repr: ContentHash?
        if let value = field(reprDigest, in: headers) {
            repr = try sha256(inReprDigest: value)
        }
        if let hex, let repr, hex != repr {
            throw DallyError(.badRequest, "Dally-Object-Sha256 and Repr-Digest name different hashes", field: "Repr-Digest")
        }
        return hex ?? repr
    }

    static func field(_ name: String, in headers: HTTPFields) -> String? {
        headers.first { $0.name.canonicalName == name }?.value
    }

    /// The `sha-256` member of a `Repr-Digest` dictionary, e.g. `sha-256=:X48E9q…=:`.
    static func sha256(inReprDigest value: String) throws(DallyError) -> ContentHash? {
        for member in value.split(separator: ",") {
            let parts = member.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces).lowercased() == "sha-256" else {
                continue
            }
            let encoded = parts[1].trimmingCharacters(in: .whitespaces)
            guard encoded.count > 2, encoded.hasPrefix(":"), encoded.hasSuffix(":"),
                let digest = Data(base64Encoded: String(encoded.dropFirst().dropLast())),
                let hash = ContentHash(digest: digest)
            else {
                throw DallyError(
                    .badRequest, "Repr-Digest's sha-256 must be :<base64 of 32 bytes>:", field: "Repr-Digest")
            }
            return hash
        }
        return nil
    }
}
