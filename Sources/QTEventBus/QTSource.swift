// SPDX-License-Identifier: MIT
// Shared sources (ReactiveCocoa's RACMulticastConnection) over qtbus_source_*.
//
// The engine keeps the connection state and runs start and stop (never overlapping,
// strictly alternating, never under a lock); this class holds the closures in a
// retained `_QTSourceBody`, the engine's userdata, released by its release hook after
// dispose and the stop that follows it.
import CQtbusShims
import QTBusEngine

/// A side effect that feeds events of one type (a socket, a timer, a file watch),
/// started once per connection however many subscribers there are: ReactiveCocoa's
/// `RACMulticastConnection`.
///
/// ```swift
/// let clock = try QTSource(of: Tick.self, autoconnect: true,
///                          start: { bus in timer.start { bus.dispatch(Tick()) } },
///                          stop: { timer.stop() })
/// let token = bus.on(Tick.self).next { tick in ... }   // starts the timer
/// token.dispose()                                      // the last one stops it
/// ```
///
/// - ``connect()`` runs `start` unless connected; ``disconnect()`` runs `stop` if
///   connected; a later connect starts it again. Each runs inside the call that causes
///   it, on its thread, unless another thread is running this source's start or stop at
///   that moment: that thread then runs it next and the call returns without waiting.
/// - With `autoconnect`, the type's first live subscription (any subtype, any queue, C
///   or Swift) connects it, inside that subscribe, before the subscription's replay;
///   the end of the last one disconnects it; a later first subscriber connects it
///   again. Explicit connect and disconnect work too.
/// - Lifetime: ``dispose()``, or the deallocation of this object, disconnects it (stop
///   runs, in that call, on that thread) and ends it; the closures are released after
///   that stop. The source keeps its bus alive until then.
/// - Failures follow the rule of the whole API (see "Errors" in the overview): an
///   invalid type name traps; every call on a disposed source (disposed by this object,
///   another thread, or C code through ``id``) but ``dispose()`` throws
///   ``QTBusError/stale``.
public final class QTSource: Sendable {
    /// The bus the source's events go to (passed to `start`).
    public let bus: QTEventBus
    /// The type of the events it feeds (its subscriptions drive autoconnect).
    public let type: String
    /// Whether the type's subscriptions connect and disconnect it.
    public let isAutoconnect: Bool
    /// The engine source's id (`qtbus_source.id`), for C code in the same process.
    public let id: UInt64

    /// Makes a disconnected source of events of the named type `type` on `bus` (with
    /// `autoconnect`, connected at once if the type has subscriptions already).
    ///
    /// `start` receives the bus to dispatch on; `stop` (optional) undoes it. An invalid
    /// `type` (``QTEventBus/isValidName(_:)``) is a programmer error: this call traps.
    ///
    /// - Throws: ``QTBusError/outOfMemory``.
    public init(
        bus: QTEventBus = .shared, type: String, autoconnect: Bool = false,
        start: @escaping @Sendable (QTEventBus) -> Void,
        stop: (@Sendable () -> Void)? = nil
    ) throws(QTBusError) {
        let call = "QTSource.init(bus:type:autoconnect:start:stop:)"
        _qtRequireName(type, .type, call)
        self.bus = bus
        self.type = type
        self.isAutoconnect = autoconnect
        // withCString rethrows untyped errors: carry the result out instead.
        let result = type.withCString { cName in
            Result { () throws(QTBusError) in
                try _qtSourceCreate(bus, cName, autoconnect, start, stop, call)
            }
        }
        id = try result.get()
    }

    /// ``init(bus:type:autoconnect:start:stop:)`` for the typed event `E`: its
    /// subscriptions (`bus.on(E.self)`) drive autoconnect. An invalid
    /// ``QTEvent/eventName`` traps.
    public init<E: QTEvent>(
        bus: QTEventBus = .shared, of eventType: E.Type, autoconnect: Bool = false,
        start: @escaping @Sendable (QTEventBus) -> Void,
        stop: (@Sendable () -> Void)? = nil
    ) throws(QTBusError) {
        let call = "QTSource.init(bus:of:autoconnect:start:stop:)"
        let cName = _qtRequireTypeName(E.self, call)
        self.bus = bus
        self.type = String(cString: cName)
        self.isAutoconnect = autoconnect
        id = try _qtSourceCreate(bus, cName, autoconnect, start, stop, call)
    }

    deinit { _ = _qtbus_source_dispose(source) }

    private var source: qtbus_source { qtbus_source(id: id) }

    /// Runs `start` if the source is not connected; does nothing if it is.
    ///
    /// - Throws: ``QTBusError/stale`` when the source was disposed; nothing ran.
    public func connect() throws(QTBusError) {
        let before = QTBusError.failuresSoFar
        try _qtThrowing(_qtbus_source_connect(source), since: before, "QTSource.connect()")
    }

    /// Runs `stop` if the source is connected; a later ``connect()`` starts it again.
    ///
    /// - Throws: ``QTBusError/stale`` when the source was disposed (its dispose ran
    ///   `stop` already).
    public func disconnect() throws(QTBusError) {
        let before = QTBusError.failuresSoFar
        try _qtThrowing(_qtbus_source_disconnect(source), since: before, "QTSource.disconnect()")
    }

    /// Disconnects the source if connected (stop runs) and ends it. Safe more than
    /// once, and after C code disposed it: the source is then already ended, which is
    /// what was asked. Also done by deinit.
    public func dispose() {
        // QTBUS_ESTALE, its only failure, says it had ended already.
        _ = _qtbus_source_dispose(source)
    }
}

/// The engine's userdata for one source.
final class _QTSourceBody: @unchecked Sendable {
    // @unchecked: immutable after init.
    let bus: QTEventBus
    let start: @Sendable (QTEventBus) -> Void
    let stop: (@Sendable () -> Void)?

    init(bus: QTEventBus, start: @escaping @Sendable (QTEventBus) -> Void, stop: (@Sendable () -> Void)?) {
        self.bus = bus
        self.start = start
        self.stop = stop
    }
}

private func _qtSourceCreate(
    _ bus: QTEventBus, _ cName: UnsafePointer<CChar>, _ autoconnect: Bool,
    _ start: @escaping @Sendable (QTEventBus) -> Void,
    _ stop: (@Sendable () -> Void)?, _ call: String
) throws(QTBusError) -> UInt64 {
    let userdata = Unmanaged.passRetained(_QTSourceBody(bus: bus, start: start, stop: stop)).toOpaque()
    var source = qtbus_source(id: 0)
    let before = QTBusError.failuresSoFar
    let status = _qtbus_source_create(
        bus.raw, cName, autoconnect ? UInt32(QTBUS_SOURCE_AUTOCONNECT) : 0,
        _qtSourceStart, _qtSourceStop, userdata, _qtSourceRelease, &source)
    if status < 0 { Unmanaged<_QTSourceBody>.fromOpaque(userdata).release() }
    try _qtThrowing(status, since: before, call)
    return source.id
}

private let _qtSourceStart: qtbus_source_start = { _, userdata in
    Unmanaged<_QTSourceBody>.fromOpaque(userdata.unsafelyUnwrapped)._withUnsafeGuaranteedRef { $0.start($0.bus) }
}

private let _qtSourceStop: qtbus_source_stop = { userdata in
    Unmanaged<_QTSourceBody>.fromOpaque(userdata.unsafelyUnwrapped)._withUnsafeGuaranteedRef { $0.stop?() }
}

private let _qtSourceRelease: qtbus_release = { userdata in
    Unmanaged<_QTSourceBody>.fromOpaque(userdata.unsafelyUnwrapped).release()
}
