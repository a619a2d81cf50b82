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
        let text = header.drop { $0 == " " }
        guard text.count > scheme.count, text.prefix(scheme.count).lowercased() == scheme.lowercased() else {
            return nil
        }
        let rest = text.dropFirst(scheme.count)
        guard rest.first == " " else { return nil }
        var credentials = rest.drop { $0 == " " }
        while credentials.last == " " { credentials = credentials.dropLast() }
        return credentials.isEmpty ? nil : credentials
    }
}
