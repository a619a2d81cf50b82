import ArgumentParser
import Foundation

/// What `dally-bench propagation` measured.
struct PropagationFigures {
    var endToEnd = Samples()
    var syncNow = Samples()
    var put = Samples()
    var beforeSyncReturned = 0
}
