import DallyCore
import DallySync
import GRDB

/// How an app settles an open conflict or rejection.
public enum ConflictResolution: Sendable {
    /// Send the local row again, now based on the cloud's version (it will replace the cloud's).
    case takeLocal
    /// Take the cloud's row as recorded with the conflict; the local change is dropped.
    case takeServer
    /// Write these values (a full row, as a PUT) and send them.
    case write(RowWrite)
}
