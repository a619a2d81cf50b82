/// Entity tags in conditional requests (RFC 9110 §8.8.3, §13.1.2).
///
/// A client that cached an answer sends its tag back in `If-None-Match`; when the tag is still
/// the resource's, the server answers `304 Not Modified` without the body. HTTP caches in
/// browsers and in `URLSession` do this by themselves, and may send several tags, or weak ones.
///
/// ```swift
/// EntityTag.isListed("\"17\"", in: "\"16\", W/\"17\"")  // true
/// EntityTag.isListed("\"17\"", in: "*")                // true
/// EntityTag.isListed("\"17\"", in: "\"16\"")           // false
/// ```
public enum EntityTag {
    /// Whether an `If-None-Match` value names `etag`: `*`, or a comma-separated list of tags
    /// one of which is `etag` compared weakly (a `W/` prefix ignored), as §13.1.2 has it.
    public static func isListed(_ etag: String, in header: String) -> Bool {
        header.split(separator: ",").contains { candidate in
            var tag = candidate.drop { $0 == " " || $0 == "\t" }
            while tag.last == " " || tag.last == "\t" { tag = tag.dropLast() }
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag = tag.dropFirst(2) }
            return tag == etag
        }
    }
}
