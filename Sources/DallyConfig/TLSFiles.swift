import Foundation

/// PEM files named in a configuration, checked when it is read so that a typo shows at
/// `--check`, not at the first connection.
enum TLSFiles {
    /// Reads an optional path under `key`; it must name a readable file.
    static func path(_ section: TOMLSection, _ key: String) throws(KeyError) -> String? {
        guard let path = try section.string(key) else { return nil }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw KeyError(key: section.keyPath(key), reason: "cannot read the file \(path)")
        }
        return path
    }

    /// Reads a certificate and its key under `certificateKey` and `keyKey`: both or neither.
    static func pair(_ section: TOMLSection, _ certificateKey: String, _ keyKey: String) throws(KeyError)
        -> CertificateFiles?
    {
        let certificate = try path(section, certificateKey)
        let key = try path(section, keyKey)
        switch (certificate, key) {
        case (let certificate?, let key?): return CertificateFiles(certificate: certificate, key: key)
        case (nil, nil): return nil
        case (nil, _): throw KeyError(key: section.keyPath(certificateKey), reason: "missing: \(keyKey) is set, so is its certificate")
        case (_, nil): throw KeyError(key: section.keyPath(keyKey), reason: "missing: \(certificateKey) is set, so is its private key")
        }
    }
}
