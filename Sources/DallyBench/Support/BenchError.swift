import Foundation
import Logging
import ServiceLifecycle

/// A benchmark that could not run to the end (a refused request, a server that did not start).
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
