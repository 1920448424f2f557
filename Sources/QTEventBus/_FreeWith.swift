// freeWith(object) without associated objects.
//
// On iOS, QTEventBus hangs a dispose bag on the object, so the object's dealloc
// disposes the subscription at once. Linux has no associated objects and Swift offers no
// hook into another object's deinit, so a freeWith subscription holds the object weakly
// and checks it:
//   1. before every delivery (and again on the target queue, after an `atQueue` hop):
//      once the object is gone the handler is never called again, and the subscription
//      disposes its token; its closure is then released under lifetime rule 1, when
//      that dispatch (and any other in progress) has returned.
//   2. a subscription that names subtypes is not reached by events of other subtypes,
//      so it is also registered here, under its engine name; every Swift dispatch of
//      that name (typed or named) first sweeps the registry and disposes the
//      subscriptions whose object is gone. Disposing outside any dispatch releases the
//      closure before the sweep returns.
// Together: once the object is deallocated, the closure is released no later than the
// end of the next Swift dispatch of the type. (An event C dispatches does not sweep;
// it still never reaches the handler.)
//
// The sweep runs only when the registry is non-empty (one relaxed load otherwise), and
// walks a snapshot outside the lock: loading a weak reference can end the object's
// life, and its deinit (user code) must not run under our lock.
import CQtbusShims
import Synchronization

/// One registered freeWith subscription. `owner` is written once, in init; the Swift
/// runtime makes concurrent loads of a weak reference safe.
final class _QTFreeWithEntry: @unchecked Sendable {
    let token: QTEventToken
    weak var owner: AnyObject?

    init(token: QTEventToken, owner: AnyObject) {
        self.token = token
        self.owner = owner
    }
}

/// What is kept per engine type name: its C string and the freeWith sweep registry.
/// One per name, immortal (found again by name), shared by every Swift type whose
/// `eventName` is that name and by `on(named:)` subscriptions.
@usableFromInline
final class _QTNameInfo: @unchecked Sendable {
    // @unchecked: `cName` is immutable after init and never freed; the rest is atomic or
    // lives inside its lock.
    let name: String
    /// NUL-terminated copy of `name`, or nil when it is not a valid engine name.
    let cName: UnsafePointer<CChar>?
    /// Entries in `entries` (read without the lock by the dispatch path).
    @usableFromInline let sweepCount = Atomic<Int>(0)
    private let entries = _QTLocked<[ObjectIdentifier: _QTFreeWithEntry]>([:])

    private static let byName = _QTLocked<[String: _QTNameInfo]>([:])
    /// Entries over all names: lets a named dispatch skip the name lookup.
    static let totalSweepCount = Atomic<Int>(0)

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

    /// The info of `name` if it was ever made.
    static func existing(_ name: String) -> _QTNameInfo? {
        byName.withLock { $0[name] }
    }

    /// Whether a dispatch of this name must sweep first.
    @inlinable
    var needsSweep: Bool { sweepCount.load(ordering: .relaxed) != 0 }

    /// Registers a freeWith subscription that names subtypes (before it is made, so a
    /// sweep can never miss it).
    func register(_ token: QTEventToken, owner: AnyObject) {
        let entry = _QTFreeWithEntry(token: token, owner: owner)
        let added = entries.withLock { table -> Bool in
            guard table.updateValue(entry, forKey: ObjectIdentifier(token)) == nil else { return false }
            return true
        }
        if added {
            sweepCount.add(1, ordering: .relaxed)
            _QTNameInfo.totalSweepCount.add(1, ordering: .relaxed)
        }
    }

    /// Removes a registration (from the subscription's release hook, or after a failed
    /// subscribe).
    func unregister(_ token: QTEventToken) {
        let removed = entries.withLock { $0.removeValue(forKey: ObjectIdentifier(token)) }
        if removed != nil {
            sweepCount.subtract(1, ordering: .relaxed)
            _QTNameInfo.totalSweepCount.subtract(1, ordering: .relaxed)
        }
    }

    /// Disposes every registered subscription whose object is gone. The release hooks
    /// that follow remove them from the registry.
    @usableFromInline
    func sweep() {
        let snapshot = entries.withLock { $0 }
        for entry in snapshot.values where entry.owner == nil {
            entry.token.dispose()
        }
    }

    /// The sweep a named dispatch of `name` makes, if any registration exists anywhere.
    static func sweep(named name: String) {
        guard totalSweepCount.load(ordering: .relaxed) != 0, let info = existing(name), info.needsSweep else { return }
        info.sweep()
    }
}
