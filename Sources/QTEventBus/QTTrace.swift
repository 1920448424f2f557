// SPDX-License-Identifier: MIT
// What a bus does, as it does it: qtbus_trace_set for Swift.
import CQtbusShims
import QTBusEngine

/// The kinds of ``QTTraceRecord`` a trace hook receives.
public struct QTTraceKinds: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// A dispatch finished.
    public static let dispatch = QTTraceKinds(rawValue: QTBUS_TRACE_DISPATCH.rawValue)
    /// One handler call finished.
    public static let deliver = QTTraceKinds(rawValue: QTBUS_TRACE_DELIVER.rawValue)
    /// A subscription was made.
    public static let subscribe = QTTraceKinds(rawValue: QTBUS_TRACE_SUBSCRIBE.rawValue)
    /// A subscription ended.
    public static let dispose = QTTraceKinds(rawValue: QTBUS_TRACE_DISPOSE.rawValue)
    /// A subscription's release ran (a Swift subscription's closure was let go).
    public static let release = QTTraceKinds(rawValue: QTBUS_TRACE_RELEASE.rawValue)
    /// A call naming this bus failed.
    public static let misuse = QTTraceKinds(rawValue: QTBUS_TRACE_MISUSE.rawValue)
    /// A bounded queue dropped a delivery (`qtbus_queue_set_limit`).
    public static let drop = QTTraceKinds(rawValue: QTBUS_TRACE_DROP.rawValue)
    /// Every kind.
    public static let all = QTTraceKinds(rawValue: QTBUS_TRACE_ALL.rawValue)
}

/// One thing a bus did, as its trace hook (``QTEventBus/setTraceHook(_:_:)``) sees it.
/// The fields a kind does not set are nil, 0 or false; `include/qtbus.h` says which
/// kind sets which.
public struct QTTraceRecord: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case dispatch, deliver, subscribe, dispose, release, misuse, drop
    }

    public let kind: Kind
    /// A MISUSE record's failed call (`"qtbus_subscribe"`...); a DISPOSE record's way
    /// the subscription ended (`"qtbus_token_dispose"`, `"QTBUS_SUB_ONCE"`, `"owner
    /// gone"` for a `freeWith` owner...); a DROP record's overflow rule
    /// (`"QTBUS_OVERFLOW_DROP_OLDEST"`...).
    public let function: String?
    /// The engine type name (a typed event's ``QTEvent/eventName``).
    public let type: String?
    public let subType: String?
    /// The engine token of the subscription (``QTSubscriptionInfo/token``); 0 for none.
    public let token: UInt64
    /// A MISUSE record's status (``QTBusError/rawValue``); a DISPATCH record's `reached`.
    public let status: Int32
    /// The subscriptions a dispatch reached (ran or queued).
    public let reached: Int
    /// A delivery ran on the subscription's queue (possibly before its dispatch
    /// returned, so its record may come before the DISPATCH one).
    public let queued: Bool
    /// How long the dispatch, or the handler call, took.
    public let duration: Duration

    init(_ r: qtbus_trace_record) {
        switch r.kind {
        case QTBUS_TRACE_DISPATCH.rawValue: kind = .dispatch
        case QTBUS_TRACE_DELIVER.rawValue: kind = .deliver
        case QTBUS_TRACE_SUBSCRIBE.rawValue: kind = .subscribe
        case QTBUS_TRACE_DISPOSE.rawValue: kind = .dispose
        case QTBUS_TRACE_RELEASE.rawValue: kind = .release
        case QTBUS_TRACE_DROP.rawValue: kind = .drop
        default: kind = .misuse
        }
        function = r.function.map { String(cString: $0) }
        type = r.type.map { String(cString: $0) }
        subType = r.subtype.map { String(cString: $0) }
        token = r.token.id
        status = r.status
        reached = Int(r.reached)
        queued = r.queued != 0
        duration = .nanoseconds(Int64(clamping: r.duration_ns))
    }
}

extension QTEventBus {
    /// Sets this bus's trace hook, replacing the one it had: `hook` runs for each record
    /// of the kinds asked for, on the thread where the thing happened, right after it
    /// happened, with no library lock held. Nothing is traced on a thread while a hook
    /// runs there, so the hook may use the bus (its own calls are not reported).
    ///
    /// When this returns, the replaced hook runs no more and has been released (it
    /// waits for the replaced hook's calls on other threads; called from inside a hook
    /// it cannot, and the last of those calls releases it). A hook costs a dispatch a
    /// call per record, a `String` per name in it, and two clock reads for dispatch and
    /// deliver records; with none set, tracing costs nothing.
    ///
    /// `kinds` with bits no ``QTTraceKinds`` constant has is a programmer error: this
    /// call traps.
    ///
    /// - Throws: ``QTBusError/outOfMemory``; the hook is then not set.
    public func setTraceHook(
        _ kinds: QTTraceKinds = .all,
        _ hook: @escaping @Sendable (QTTraceRecord) -> Void
    ) throws(QTBusError) {
        let box = Unmanaged.passRetained(_TraceBox(hook)).toOpaque()
        let before = QTBusError.failuresSoFar
        let status = _qtbus_trace_set(
            raw, kinds.rawValue,
            { record, userdata in
                let box = Unmanaged<_TraceBox>.fromOpaque(userdata.unsafelyUnwrapped).takeUnretainedValue()
                box.hook(QTTraceRecord(record.unsafelyUnwrapped.pointee))
            }, box,
            { userdata in
                Unmanaged<_TraceBox>.fromOpaque(userdata.unsafelyUnwrapped).release()
            })
        if status < 0 { Unmanaged<_TraceBox>.fromOpaque(box).release() }
        try _qtThrowing(status, since: before, "setTraceHook(_:_:)")
    }

    /// Removes this bus's trace hook (nothing happens if it has none). When this
    /// returns, the hook runs no more and has been released, as with
    /// ``setTraceHook(_:_:)``. Running out of memory traps.
    public func removeTraceHook() {
        // Its failures are out of memory, which this call, that does not throw, traps
        // on as Swift's own allocations do, and a bus destroyed behind this object.
        let before = QTBusError.failuresSoFar
        let status = _qtbus_trace_set(raw, 0, nil, nil, nil)
        if status < 0 { _qtRefused("removeTraceHook()", status, since: before) }
    }
}

private final class _TraceBox: Sendable {
    let hook: @Sendable (QTTraceRecord) -> Void
    init(_ hook: @escaping @Sendable (QTTraceRecord) -> Void) { self.hook = hook }
}
