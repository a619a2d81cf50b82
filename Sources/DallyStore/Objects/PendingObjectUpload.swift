import DallyCore
import DallyObjects
import Foundation
import GRDB

/// An object waiting to go up, with its chunk list, as the uploader walks it.
public struct PendingObjectUpload: Sendable, Equatable {
    public let upload: ObjectUpload
    /// Its chunk list; nil only if the object's bytes were lost (then it cannot go).
    public let manifest: ObjectManifest?
    /// How many of its distinct chunks, in manifest order, an earlier walk found in the cloud
    /// or sent: a resumed walk asks only about the rest.
    public var chunksDone: Int = 0
}
