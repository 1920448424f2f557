// SPDX-License-Identifier: MIT
// NotificationCenter bridging: `bus.on(Notification.self).ofSubType(name)`.
//
// QTEventBus issue #4: every subscriber used to add its own NotificationCenter
// observer. Here there is one observer per (bus, name), however many subscriptions name
// it. Each subscription claims its names before its engine subscription exists and gives
// them back from its release hook (after its last delivery); the claim counts live in one
// Mutex, and the observer is added by the claim that takes a count from 0 to 1 and
// removed by the release that brings it back to 0, both inside that lock. So a new
// subscriber always finds an observer in place (there is no moment where the count says
// "observed" but the observer is gone or not yet added), and the last one's departure
// removes it.
//
// `Notification` is not Sendable in swift-corelibs-foundation, while events are, so the
// bus carries a `QTNotificationEvent` wrapper and the maker maps it back; the mapping
// runs where the handler runs. A notification is delivered across threads exactly as
// NotificationCenter itself does with an observer queue.
import Foundation
import QTEventBus

/// The typed event that carries a `Notification` on a bus (its subtype is the
/// notification's name). Use `QTEventBus.on(Notification.self)` and
/// `QTEventBus.dispatch(_ notification:)` rather than this type directly.
///
/// `@unchecked Sendable`: a `Notification` (its `object` and `userInfo`) is handed to
/// handlers on other threads the way NotificationCenter hands it to observer queues; the
/// poster must not mutate what it put in them.
public struct QTNotificationEvent: QTSourcedEvent, @unchecked Sendable {
    /// The notification.
    public let notification: Notification

    /// Wraps `notification`.
    public init(_ notification: Notification) { self.notification = notification }

    /// The notification's name.
    public var eventSubType: String? { notification.name.rawValue }

    /// Claims a `NotificationCenter.default` observer for each name in `subTypes` on
    /// `bus` (see the file comment). A subscription without names claims nothing: it
    /// receives the notifications other subscriptions' observers bring in, and those
    /// dispatched to the bus directly. A name that is not a valid name traps (the
    /// notifications it would bring in could not be dispatched).
    public static func startSource(on bus: QTEventBus, subTypes: [String]) -> (@Sendable () -> Void)? {
        for name in subTypes { _qtRequireName(name, .subtype, "QTNotificationEvent.startSource(on:subTypes:)") }
        return _QTNotificationObservers.shared.claim(bus, names: subTypes)
    }
}

extension QTEventBus {
    /// Starts a subscription to notifications posted on `NotificationCenter.default`:
    /// `bus.on(Notification.self).ofSubType("UserDidLogin").next { note in ... }`.
    ///
    /// Each name given with `ofSubType` is observed on `NotificationCenter.default` by
    /// one observer per bus, however many subscriptions name it; the observer is added
    /// by the first subscription and removed with the last (QTEventBus issue #4). The
    /// notification is dispatched on the posting thread, then delivered as any event
    /// (`atQueue`, priorities, `freeWith`...). A name that is not a valid name traps in
    /// `ofSubType`, before any observer is added.
    public func on(_ type: Notification.Type) -> QTEventSubscriberMaker<Notification> {
        on(QTNotificationEvent.self).map { $0.notification }
    }

    /// Dispatches `notification` to this bus's `Notification` subscribers directly
    /// (NotificationCenter is not involved). Returns as ``QTEventBus/dispatch(_:sticky:)``:
    /// a count, never a refusal.
    ///
    /// The notification's name is the event's subtype: one that is not a valid name
    /// (``QTEventBus/isValidName(_:)``: empty, longer than 255 UTF-8 bytes, or holding a
    /// NUL byte) is a programmer error and traps, as every call taking a name does.
    @discardableResult
    public func dispatch(_ notification: Notification) -> Int {
        _qtRequireName(notification.name.rawValue, .subtype, "dispatch(_:) of Notification")
        return dispatch(QTNotificationEvent(notification))
    }
}

/// The NotificationCenter observers of every bus, counted by claims.
final class _QTNotificationObservers: @unchecked Sendable {
    // @unchecked: `table` is only touched inside `withTable`, under `lock`.
    static let shared = _QTNotificationObservers()

    private struct Key: Hashable {
        let bus: ObjectIdentifier
        let name: String
    }

    private struct Observed {
        var claims: Int
        let observer: any NSObjectProtocol
    }

    /// Every observer in place, with the number of claims on it, guarded by `lock`.
    /// NotificationCenter is called inside the lock (never user code: the observer block
    /// only dispatches, and NotificationCenter does not call blocks from addObserver or
    /// removeObserver). An NSLock (a pthread mutex) rather than Synchronization.Mutex,
    /// whose Linux futex ThreadSanitizer cannot see.
    private let lock = NSLock()
    private var table: [Key: Observed] = [:]

    private func withTable<R>(_ body: (inout [Key: Observed]) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&table)
    }

    /// Claims `names` on `bus`; returns what gives them back.
    func claim(_ bus: QTEventBus, names: [String]) -> (@Sendable () -> Void)? {
        guard !names.isEmpty else { return nil }
        let busID = ObjectIdentifier(bus)
        withTable { table in
            for name in names {
                let key = Key(bus: busID, name: name)
                if table[key] != nil {
                    table[key]!.claims += 1
                } else {
                    let observer = NotificationCenter.default.addObserver(
                        forName: Notification.Name(name), object: nil, queue: nil
                    ) { [weak bus] notification in
                        bus?.dispatch(QTNotificationEvent(notification))
                    }
                    table[key] = Observed(claims: 1, observer: observer)
                }
            }
        }
        return { [self] in release(busID, names: names) }
    }

    private func release(_ busID: ObjectIdentifier, names: [String]) {
        withTable { table in
            for name in names {
                let key = Key(bus: busID, name: name)
                guard let entry = table[key] else { continue }
                if entry.claims > 1 {
                    table[key]!.claims -= 1
                } else {
                    NotificationCenter.default.removeObserver(entry.observer)
                    table[key] = nil
                }
            }
        }
    }

    /// The number of observers in place for `name` on `bus` (0 or 1), and the claims
    /// on it. For tests.
    func state(busID: ObjectIdentifier, _ name: String) -> (observers: Int, claims: Int) {
        withTable { table in
            table[Key(bus: busID, name: name)].map { (1, $0.claims) } ?? (0, 0)
        }
    }
}
