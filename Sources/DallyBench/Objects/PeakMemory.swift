import ArgumentParser
import AsyncHTTPClient
import DallyCloud
import DallyConfig
import DallyCore
import DallyFrugal
import DallyGateway
import DallyObjects
import DallyStore
import Foundation
import Logging
import NIOCore

/// The process's peak resident memory, reset between steps (Linux: `/proc/self/clear_refs`).
enum PeakMemory {
    static func reset() {
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }

    /// VmHWM in MiB, as text.
    static var mebibytes: String {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return "?" }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let kilobytes = line.split(separator: " ").compactMap { Int($0) }.first ?? 0
            return "\(kilobytes / 1024)"
        }
        return "?"
    }
}
