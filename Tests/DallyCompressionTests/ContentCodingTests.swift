import DallyCompression
import Testing

@Suite("ContentCoding")
struct ContentCodingTests {
    @Test(arguments: [
        ("zstd", ContentCoding.zstd), ("ZSTD", .zstd), (" zstd\t", .zstd),
        ("deflate", .deflate), ("Deflate", .deflate), ("  DEFLATE ", .deflate),
        ("identity", .identity), ("IDENTITY", .identity), ("", .identity), ("  ", .identity),
    ])
    func parsesKnownTokens(_ token: String, _ expected: ContentCoding) {
        #expect(ContentCoding(header: token) == expected)
        #expect(ContentCoding(header: Substring(token)) == expected)
    }

    @Test(arguments: ["gzip", "br", "x-zstd", "compress", "zstd,deflate", "zst d", "deflate;q=1", "*"])
    func rejectsOtherTokens(_ token: String) {
        #expect(ContentCoding(header: token) == nil)
    }

    @Test func headerValueIsTheTokenAndNoneForIdentity() {
        #expect(ContentCoding.zstd.header == "zstd")
        #expect(ContentCoding.deflate.header == "deflate")
        #expect(ContentCoding.identity.header == nil)
        for coding in ContentCoding.allCases {
            #expect(ContentCoding(header: coding.header ?? "") == coding)
        }
    }

    @Test(arguments: [
        ("zstd, deflate", ContentCoding?.some(.zstd)),
        ("deflate, zstd", .zstd),
        ("gzip, deflate, br", .deflate),
        ("gzip, deflate, br, zstd", .zstd),
        ("gzip, br", .identity),
        ("", .identity),
        ("zstd;q=0.5", .zstd),
        ("zstd;q=0.001, deflate;q=1", .zstd),
        ("zstd;q=0, deflate", .deflate),
        ("zstd;q=0.000, deflate;q=0.5", .deflate),
        (" zstd ; q=0 , deflate ", .deflate),
        ("ZSTD;Q=0, DEFLATE;q=0.0", .identity),
        ("zstd;q=0, deflate;q=0, identity;q=0", nil),
        ("identity;q=0", nil),
        ("identity;q=0, deflate", .deflate),
        ("*", .zstd),
        ("*;q=0", nil),
        ("*;q=0, identity", .identity),
        ("*;q=0, deflate", .deflate),
        ("*, zstd;q=0", .deflate),
        ("*;q=0.5, zstd;q=0, deflate;q=0", .identity),
        ("zstd;level=3", .zstd),
        ("zstd;q=1.000", .zstd),
        ("zstd;q=abc", .identity),
        ("zstd;q=1.5, deflate", .deflate),
        ("zstd;q=0.0001", .identity),
        (",, zstd ,", .zstd),
    ])
    func negotiatesAcceptEncoding(_ header: String, _ expected: ContentCoding?) {
        #expect(ContentCoding.negotiate(acceptEncoding: header) == expected)
    }
}
