import Testing
@testable import DallySync
