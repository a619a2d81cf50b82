extension ContentCoding {
    /// Picks the coding for a response from a request's Accept-Encoding value.
    ///
    /// The server's preference decides (zstd, then deflate, then identity), because the codings a
    /// client lists are ones it can decode and Dally knows which is cheapest for it to produce;
    /// q-values are honoured only as exclusions (`q=0`), the part of them that is a hard rule.
    /// A specific entry overrides `*`. Identity is acceptable unless excluded by
    /// `identity;q=0`, or by `*;q=0` with no `identity` entry (RFC 9110 §12.5.3).
    ///
    /// An absent header means "anything", which is the caller's call to make; pass the value
    /// only when the header is present. An empty value allows identity alone.
    ///
    /// - Returns: The coding to use, or nil when the client refused everything Dally has (the
    ///   caller may answer 406, or send identity anyway as RFC 9110 allows).
    public static func negotiate(acceptEncoding: some StringProtocol) -> ContentCoding? {
        var explicit: [ContentCoding: Bool] = [:]
        var wildcard: Bool?
        for element in Substring(acceptEncoding).split(separator: ",") {
            let parts = element.split(separator: ";")
            guard let name = parts.first.map(HTTPToken.trimmed), !name.isEmpty,
                  let acceptable = acceptability(parameters: parts.dropFirst())
            else { continue }
            if name == "*" {
                wildcard = acceptable
            } else if let coding = ContentCoding(header: name) {
                explicit[coding] = acceptable
            }
        }
        let order: [ContentCoding] = [.zstd, .deflate, .identity]
        return order.first { coding in
            if let listed = explicit[coding] { return listed }
            if let wildcard { return wildcard }
            return coding == .identity
        }
    }

    /// Whether an element's parameters leave it acceptable: false for a zero q-value, true for
    /// any other, nil when the q-value is malformed so the element is ignored rather than guessed.
    private static func acceptability(parameters: ArraySlice<Substring>) -> Bool? {
        for parameter in parameters {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, HTTPToken.trimmed(pair[0]).lowercased() == "q" else { continue }
            return qValueIsPositive(HTTPToken.trimmed(pair[1]))
        }
        return true
    }

    /// Reads `qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )`: whether it is above
    /// zero, or nil when it does not match the grammar.
    private static func qValueIsPositive(_ text: Substring) -> Bool? {
        let pieces = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = pieces.first, whole == "0" || whole == "1" else { return nil }
        let fraction = pieces.count == 2 ? pieces[1] : ""
        guard fraction.count <= 3, fraction.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        if whole == "1" { return fraction.allSatisfy { $0 == "0" } ? true : nil }
        return fraction.contains { $0 != "0" }
    }
}
