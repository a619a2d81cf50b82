import Foundation
import Logging
import ServiceLifecycle

extension Duration {
    var benchMilliseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }

    var benchSeconds: Double { benchMilliseconds / 1000 }
}
