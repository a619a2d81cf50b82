import DallyObjects

/// Why an object transfer stopped.
enum ObjectTransferError: Error, CustomStringConvertible {
    case uplinkWentAway(String)
    case chunkLost(ContentHash, object: ContentHash)
    case manifestRefused(ContentHash)
    case notInCloud(ContentHash)

    var description: String {
        switch self {
        case .uplinkWentAway(let name): "uplink \(name) stopped being usable during an object transfer"
        case .chunkLost(let chunk, let object): "chunk \(chunk) of object \(object) is not in the chunk store"
        case .manifestRefused(let object): "the cloud refused the manifest of object \(object) twice (missing chunks)"
        case .notInCloud(let object): "the cloud does not hold object \(object), which an atomic row references"
        }
    }
}
