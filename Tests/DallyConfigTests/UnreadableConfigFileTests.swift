import Foundation
import Testing

@testable import DallyConfig

@Suite("ConfigFile: unreadable files")
struct UnreadableConfigFileTests {
    /// Said in the system's words, not Foundation's "The operation could not be completed. The
    /// file doesn't exist."
    @Test func whyAFileCannotBeReadIsSaidPlainly() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dally-config-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let binary = directory + "/binary.toml"
        let created = FileManager.default.createFile(atPath: binary, contents: Data([0xff, 0xfe, 0x00, 0xc3]))
        #expect(created)
        for (path, reason) in [(directory + "/none.toml", "no such file"), (directory, "it is a directory"), (binary, "it is not UTF-8 text")] {
            do throws(ConfigError) {
                _ = try GatewayConfig.load(path: path)
                Issue.record("\(path) was read")
            } catch {
                #expect(error.description == "\(path): cannot read the file: \(reason)")
            }
        }
    }
}
