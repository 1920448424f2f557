// SPDX-License-Identifier: MIT
// One record per engine type name used from Swift: its C string, made once.
import CQtbusShims

/// What is kept per engine type name: the name and its C string.  One per name,
/// immortal (found again by name), shared by every Swift type whose `eventName` is that
/// name and by `on(named:)` subscriptions.
@usableFromInline
final class _QTNameInfo: @unchecked Sendable {
    // @unchecked: immutable after init; `cName` is never freed.
    let name: String
    /// NUL-terminated copy of `name`, or nil when it is not a valid engine name.
    let cName: UnsafePointer<CChar>?

    private static let byName = _QTLocked<[String: _QTNameInfo]>([:])

    private init(name: String) {
        self.name = name
        cName = _qtIsValidName(name) ? UnsafePointer(_qtCString(name)) : nil
    }

    /// The info of `name`, made on first use.
    static func forName(_ name: String) -> _QTNameInfo {
        byName.withLock { table in
            if let info = table[name] { return info }
            let info = _QTNameInfo(name: name)
            table[name] = info
            return info
        }
    }
}
