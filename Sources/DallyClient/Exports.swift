// The domain values the client's API speaks in, so that `import DallyClient` alone is enough:
// JSON values (rows of any table) and the gateway's stable error codes, one copy shared with
// the gateway itself.
@_exported import enum DallyCore.JSONValue
@_exported import struct DallyCore.JSONMember
@_exported import struct DallyCore.DallyError

/// The gateway's stable error codes (`wrong_type`, `version_mismatch`, …), as in docs/API.md.
///
/// For example: `if error.code == .unknownColumn { … }`.
public typealias DallyErrorCode = DallyError.Code
