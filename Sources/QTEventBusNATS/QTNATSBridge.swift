// SPDX-License-Identifier: MIT
// The NATS bridge for Swift: libqtbus-nats's C sources (include/qtbus_nats.h), compiled
// into this package (CQtbusNATS), over the same engine and buses as QTEventBus.
import CQtbusNATS
import CQtbusShims
import Dispatch
import QTBusEngine
import QTEventBus

/// A bus joined to a NATS server: what its bus dispatches of the exported types is
/// published, and what other processes publish of the imported types is dispatched on
/// its bus, to every subscriber, Swift or C.
///
/// ```swift
/// let bus = QTEventBus()
/// let bridge = try await QTNATSBridge(bus: bus, url: "nats://127.0.0.1:4222")
/// bridge.export(named: "Order.created")               // local dispatches are published
/// try await bridge.import(matching: "Price.>")        // others' Price.* events come here
/// bus.on(named: "Price.eur").next { event in print(event.text) }
/// ...
/// try await bridge.close()
/// ```
///
/// It is C's `qtbus_nats` (include/qtbus_nats.h has the rules: subjects, patterns,
/// delivery, requests, sticky events), made from the same C sources, so a Swift process
/// and a C or C++ one bridged to the same server with the same prefix exchange events.
/// What crosses is an event's type, subtype, bytes and sticky flag: named events
/// (`QTEventBus.on(named:)`, `QTEventBus.dispatch(named:subType:bytes:sticky:)`),
/// JSON events (the type `QTEventBus.jsonTypeName` with the JSON name as
/// subtype: `import(named: QTEventBus.jsonTypeName, subType: "profile")`), and typed
/// Swift events by their `QTEvent.eventName` with their
/// `QTBytesEvent.eventBytes`. Imported events are dispatched on the bridge's
/// own thread, one at a time: handlers run there unless they hop
/// (`QTEventSubscriberMaker.atQueue(_:)`).
///
/// ## Errors
///
/// The rule of QTEventBus (its overview, "Errors"), with one addition for connecting:
/// - A programmer error traps, naming the call: a type, subtype or pattern that is not
///   valid (`QTEventBus.isValidName(_:)`; a pattern as
///   `QTEventBus.on(matching:)` takes it), a pattern given as a type
///   (`export(named: "Order.>")`: use `matching:`), and exporting or importing after
///   ``close()``.
/// - A refusal a correct program cannot prevent throws `QTBusError` with
///   `qtbus_errmsg()`'s words: connecting (every failure, `QTBusError.invalidArgument`
///   included, since a url or prefix usually comes from a configuration:
///   `qtbus_nats_connect: no server at nats://127.0.0.1:1 could be reached: ...`, with
///   passwords shown as `***`; `QTBusError.accessDenied` when a server was reached and
///   refused the credentials), an import the server did not confirm (`QTBusError.io`)
///   or its permissions refused (`QTBusError.accessDenied`), and a ``close()`` that may
///   have lost what it was to deliver.
/// - A result is an answer: `unexport`/`unimport` return whether there was something to
///   undo.
///
/// ## Waiting
///
/// Connecting, importing, unimporting and closing wait for the server (an import
/// returns once the server has the subscription, at most about 2 s; a close flushes and
/// drains, at most about 8 s, or as long as ``close(timeout:)`` is given), so they are
/// `async`: the wait runs on a thread of the
/// bridge's (a serial queue, in the order the calls were made), never on the task's, and
/// is not cancelled with the task. Exporting, `stats` and `isConnected` do not wait.
///
/// ## Lifetime
///
/// The bridge keeps its bus alive (C's rule: a bridge is closed before its bus is
/// destroyed). Call ``close()`` when done; a bridge released without it is closed on
/// its queue in the background, as `close()` would (its loss, if any, is reported only
/// to the bus's trace hook and `QTBUS_DEBUG=misuse`).
public final class QTNATSBridge: Sendable {
    /// The bus whose events this bridge exports and imports.
    public let bus: QTEventBus
    private let state: _QTNBridgeState
    private let queue: DispatchQueue

    /// Received events a bridge holds before its thread has dispatched them
    /// (`QTBUS_NATS_MAX_PENDING`); beyond it, newly received ones are dropped and
    /// reported.
    public static let maxPending = UInt64(QTBUS_NATS_MAX_PENDING)

    /// Connects `bus` to the NATS server(s) at `url` (C's `qtbus_nats_connect`).
    ///
    /// - Parameters:
    ///   - bus: the bus to bridge.
    ///   - url: `"nats://127.0.0.1:4222"`; a comma-separated list for a cluster, tried in
    ///     order; an entry may carry credentials (`nats://user:password@host:port`,
    ///     `nats://token@host:port`).
    ///   - prefix: the subjects' first tokens (`"acme.prod"`); nil: `"qtbus"`. Bridges
    ///     exchange events only under the same prefix.
    ///   - jetstream: sticky events are kept by the server in a JetStream stream, so a
    ///     process that imports a type later still receives its last sticky event.
    ///   - requestTimeout: how long a bridged request collects remote replies; nil or
    ///     zero: 1 s.
    /// - Throws: `QTBusError`: `.io` when no server could be reached (the
    ///   message names the url, with passwords as `***`, and nats.c's reason) or, with
    ///   `jetstream`, the server has no JetStream; `.accessDenied` when a server was
    ///   reached and refused access (wrong or missing credentials); `.invalidArgument` for a url that lists
    ///   no server or holds a NUL byte, a prefix that is not a NATS subject without
    ///   wildcards, a negative timeout; `.outOfMemory`.
    public convenience init(
        bus: QTEventBus = .shared, url: String, prefix: String? = nil, jetstream: Bool = false,
        requestTimeout: Duration? = nil
    ) async throws(QTBusError) {
        let call = "QTNATSBridge(bus:url:prefix:jetstream:requestTimeout:)"
        if let nul = _qtnNULOffset(url) {
            // Not quoted: a url may hold a password.
            throw QTBusError(.invalidArgument, message: "\(call): the url holds a NUL byte (at byte \(nul))")
        }
        let queue = Self.makeQueue()
        let raw = try await Self.connect(on: queue, call: call, prefix: prefix) { options, out in
            url.withCString { url in
                var options = options
                options.url = url
                options.jetstream = jetstream ? 1 : 0
                options.request_timeout_ms = _qtnMilliseconds(requestTimeout)
                return qtbus_nats_connect(bus.cBus, &options, out)
            }
        }
        self.init(bus: bus, raw: raw, queue: queue)
    }

    /// Connects `bus` with nats.c options the caller configured with nats.c's own
    /// setters (C's `qtbus_nats_connect_with`): TLS, a user and password, a token, an
    /// NKey or a credentials file, a name, reconnect settings, retry on failed connect.
    ///
    /// `natsOptions` is nats.c's `natsOptions *` (`import CNATS` to make one). The bridge
    /// sets its no-echo and error handler on them for the connect only; they stay the
    /// caller's, to reuse or destroy once this returns. With nats.c's
    /// `natsOptions_SetRetryOnFailedConnect`, a server that is not up yet is no failure:
    /// the bridge works once it comes up.
    ///
    /// - Throws: `QTBusError` as ``init(bus:url:prefix:jetstream:requestTimeout:)``
    ///   does, with nats.c's reason.
    public convenience init(
        bus: QTEventBus = .shared, natsOptions: OpaquePointer, prefix: String? = nil,
        jetstream: Bool = false, requestTimeout: Duration? = nil
    ) async throws(QTBusError) {
        let queue = Self.makeQueue()
        let natsOptions = _QTNPointer(raw: natsOptions)
        let raw = try await Self.connect(
            on: queue, call: "QTNATSBridge(bus:natsOptions:prefix:jetstream:requestTimeout:)",
            prefix: prefix
        ) { options, out in
            var options = options
            options.jetstream = jetstream ? 1 : 0
            options.request_timeout_ms = _qtnMilliseconds(requestTimeout)
            return qtbus_nats_connect_with(bus.cBus, natsOptions.raw, &options, out)
        }
        self.init(bus: bus, raw: raw, queue: queue)
    }

    /// Bridges `bus` over a connection the application already has (C's
    /// `qtbus_nats_attach`; `connection` is nats.c's `natsConnection *`).
    ///
    /// The connection stays the application's: the bridge never closes it, not even in
    /// ``close()``. Close the bridge before the connection.
    ///
    /// - Throws: `QTBusError`: `.invalidArgument` for a closed connection or
    ///   a bad prefix, `.io` for a server without headers (or, with `jetstream`, without
    ///   JetStream), `.outOfMemory`.
    public convenience init(
        bus: QTEventBus = .shared, attaching connection: OpaquePointer, prefix: String? = nil,
        jetstream: Bool = false, requestTimeout: Duration? = nil
    ) async throws(QTBusError) {
        let queue = Self.makeQueue()
        let connection = _QTNPointer(raw: connection)
        let raw = try await Self.connect(
            on: queue, call: "QTNATSBridge(bus:attaching:prefix:jetstream:requestTimeout:)",
            prefix: prefix
        ) { options, out in
            var options = options
            options.jetstream = jetstream ? 1 : 0
            options.request_timeout_ms = _qtnMilliseconds(requestTimeout)
            return qtbus_nats_attach(bus.cBus, connection.raw, &options, out)
        }
        self.init(bus: bus, raw: raw, queue: queue)
    }

    private init(bus: QTEventBus, raw: _QTNPointer, queue: DispatchQueue) {
        self.bus = bus
        self.state = _QTNBridgeState(raw.raw)
        self.queue = queue
    }

    deinit {
        // Closed in the background, as close() would; the block keeps the bus alive
        // until then (C's rule: the bridge goes first).
        let state = state
        let bus = bus
        queue.async {
            guard let bridge = state.take() else { return }
            _ = qtbus_nats_close(bridge)
            withExtendedLifetime(bus) {}
        }
    }

    // MARK: Exporting

    /// From now on, every local dispatch of the type `type` on ``bus`` (any subtype) is
    /// published (C's `qtbus_nats_export`). Exporting a type twice changes nothing.
    ///
    /// The export is a subscription of the bus at the highest priority: it counts in what
    /// a dispatch returns and in `QTEventBus.subscriberCount(named:subType:)`.
    /// An invalid name, a pattern (`"Order.>"`: use ``export(matching:)``) or a closed
    /// bridge traps.
    public func export(named type: String) {
        let call = "QTNATSBridge.export(named:)"
        _qtnRequireType(type, call)
        exportCall(type, call)
    }

    /// From now on, every local dispatch of a type `pattern` matches is published, each
    /// on its own type's subject (C's `qtbus_nats_export` of a pattern). NATS's wildcards
    /// over dot-separated tokens, as `QTEventBus.on(matching:)` takes them:
    /// `"Order.*"`, `"Order.>"`. An invalid pattern or a closed bridge traps.
    public func export(matching pattern: String) {
        let call = "QTNATSBridge.export(matching:)"
        _qtRequirePattern(pattern, call)
        exportCall(pattern, call)
    }

    /// Undoes ``export(named:)`` of exactly this type (C's `qtbus_nats_unexport`): a
    /// dispatch that starts after this returns is not published. Returns false when the
    /// bridge does not export it (never did, undid it already, or is closed).
    @discardableResult
    public func unexport(named type: String) -> Bool {
        let call = "QTNATSBridge.unexport(named:)"
        _qtnRequireType(type, call)
        return undo(call) { bridge in type.withCString { qtbus_nats_unexport(bridge, $0) } }
    }

    /// Undoes ``export(matching:)`` of exactly this pattern; false when there was none.
    @discardableResult
    public func unexport(matching pattern: String) -> Bool {
        let call = "QTNATSBridge.unexport(matching:)"
        _qtRequirePattern(pattern, call)
        return undo(call) { bridge in pattern.withCString { qtbus_nats_unexport(bridge, $0) } }
    }

    // MARK: Importing

    /// From now on, events of the type `type` (every subtype) that other bridges with the
    /// same prefix publish are dispatched on ``bus`` (C's `qtbus_nats_import`); returns
    /// once the server has the subscription, so what is published after that arrives.
    /// Importing a type twice changes nothing.
    ///
    /// An invalid name, a pattern (use ``import(matching:)``) or a closed bridge traps.
    /// - Throws: `QTBusError`: `.io` when the server did not confirm the
    ///   subscription within 2 s (it is kept, and sent again on reconnect),
    ///   `.accessDenied` when its permissions refused it (nothing kept), `.outOfMemory`.
    public func `import`(named type: String) async throws(QTBusError) {
        let call = "QTNATSBridge.import(named:)"
        _qtnRequireType(type, call)
        try await importCall(call) { bridge in type.withCString { qtbus_nats_import(bridge, $0) } }
    }

    /// As ``import(named:)``, for the events of `type` with this one subtype only (C's
    /// `qtbus_nats_import_subtype`): the server sends no others. A type imported whole
    /// already receives them.
    public func `import`(named type: String, subType: String) async throws(QTBusError) {
        let call = "QTNATSBridge.import(named:subType:)"
        _qtnRequireType(type, call)
        _qtRequireName(subType, .subtype, call)
        try await importCall(call) { bridge in
            type.withCString { type in subType.withCString { qtbus_nats_import_subtype(bridge, type, $0) } }
        }
    }

    /// As ``import(named:)``, for every type `pattern` matches (`"Order.>"`: Order.created,
    /// Order.paid, ...): the server sends exactly those. An invalid pattern or a closed
    /// bridge traps.
    public func `import`(matching pattern: String) async throws(QTBusError) {
        let call = "QTNATSBridge.import(matching:)"
        _qtRequirePattern(pattern, call)
        try await importCall(call) { bridge in pattern.withCString { qtbus_nats_import(bridge, $0) } }
    }

    /// Undoes ``import(named:)`` of exactly this type (C's `qtbus_nats_unimport`): the
    /// server sends no more of it, and what it had sent is dispatched before this returns
    /// (at most about 3 s). False when the bridge does not import it whole (never did,
    /// undid it already, or is closed).
    @discardableResult
    public func unimport(named type: String) async -> Bool {
        let call = "QTNATSBridge.unimport(named:)"
        _qtnRequireType(type, call)
        return await blocking { [self] in
            undo(call) { bridge in type.withCString { qtbus_nats_unimport(bridge, $0) } }
        }
    }

    /// Undoes ``import(named:subType:)``; false when there was none.
    @discardableResult
    public func unimport(named type: String, subType: String) async -> Bool {
        let call = "QTNATSBridge.unimport(named:subType:)"
        _qtnRequireType(type, call)
        _qtRequireName(subType, .subtype, call)
        return await blocking { [self] in
            undo(call) { bridge in
                type.withCString { type in subType.withCString { qtbus_nats_unimport_subtype(bridge, type, $0) } }
            }
        }
    }

    /// Undoes ``import(matching:)`` of exactly this pattern; false when there was none.
    @discardableResult
    public func unimport(matching pattern: String) async -> Bool {
        let call = "QTNATSBridge.unimport(matching:)"
        _qtRequirePattern(pattern, call)
        return await blocking { [self] in
            undo(call) { bridge in pattern.withCString { qtbus_nats_unimport(bridge, $0) } }
        }
    }

    // MARK: State

    /// What the bridge has done so far (C's `qtbus_nats_stats_get`). Once it is closed:
    /// the counts it had when the close began.
    public var stats: QTNATSStats {
        let now = state.using { bridge -> qtbus_nats_stats in
            var stats = qtbus_nats_stats()
            _ = qtbus_nats_stats_get(bridge, &stats)
            return stats
        }
        return QTNATSStats(now ?? state.lastStats)
    }

    /// Whether the bridge is connected to a server now: false while nats.c reconnects
    /// (what is published meanwhile waits in its reconnect buffer) and once it is closed.
    public var isConnected: Bool {
        state.using { qtbus_nats_is_connected($0) == 1 } ?? false
    }

    // MARK: Closing

    /// Stops exporting and importing, waits until what was published has reached the
    /// server and what was received has been dispatched, then disconnects (C's
    /// `qtbus_nats_close`; an attached connection stays open). Closing a closed bridge
    /// does nothing.
    ///
    /// - Throws: `QTBusError.io` when what it was to deliver may be lost (the
    ///   flush did not complete, or a subscription did not drain: the message says which);
    ///   the bridge is closed all the same.
    public func close() async throws(QTBusError) {
        let state = state
        let result: Result<Void, QTBusError> = await blocking {
            guard let bridge = state.take() else { return .success(()) }
            let before = qtshim_failures()
            let status = qtbus_nats_close(bridge)
            guard status < 0 else { return .success(()) }
            return .failure(_qtnError(status, since: before))
        }
        try result.get()
    }

    /// As ``close()``, within `timeout` (C's `qtbus_nats_close_timeout`): one deadline for
    /// the flush, the drains and the dispatch of what was received; what is not done by
    /// then is dropped. `.zero` closes at once (no flush, no drain); a negative timeout is
    /// `.zero`, as `Task.sleep(for:)` takes one whose time has passed. Closing a closed
    /// bridge does nothing.
    ///
    /// The wait runs on the bridge's queue, after the calls made before it there.
    ///
    /// - Throws: `QTBusError.timedOut` when the time cut the close short (what was
    ///   dropped is in the message: bytes unsent, messages not drained, events not
    ///   dispatched), `QTBusError.io` for another loss; the bridge is closed all the same.
    public func close(timeout: Duration) async throws(QTBusError) {
        let state = state
        let ms = max(_qtnMilliseconds(timeout), 0)
        let result: Result<Void, QTBusError> = await blocking {
            guard let bridge = state.take() else { return .success(()) }
            let before = qtshim_failures()
            let status = qtbus_nats_close_timeout(bridge, ms)
            guard status < 0 else { return .success(()) }
            return .failure(_qtnError(status, since: before))
        }
        try result.get()
    }

    // MARK: Internals

    private static func makeQueue() -> DispatchQueue {
        // A queue of its own: libdispatch gives a created serial queue a thread as needed
        // (overcommit), so a wait of seconds never holds a worker of the cooperative pool.
        DispatchQueue(label: "qtbus.nats.bridge")
    }

    /// Runs `body` on the bridge's queue and returns its result to the awaiting task.
    private func blocking<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await Self.blocking(on: queue, body)
    }

    private static func blocking<T: Sendable>(on queue: DispatchQueue, _ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: body()) }
        }
    }

    /// A connect through `make`, given the options with the prefix set, on `queue`.
    private static func connect(
        on queue: DispatchQueue, call: String, prefix: String?,
        _ make: @escaping @Sendable (qtbus_nats_options, UnsafeMutablePointer<OpaquePointer?>) -> Int32
    )
        async throws(QTBusError) -> _QTNPointer
    {
        if let prefix, let nul = _qtnNULOffset(prefix) {
            throw QTBusError(.invalidArgument, message: "\(call): the prefix holds a NUL byte (at byte \(nul))")
        }
        let result: Result<_QTNPointer, QTBusError> = await blocking(on: queue) {
            var out: OpaquePointer?
            let before = qtshim_failures()
            let status: Int32
            if let prefix {
                status = prefix.withCString { prefix in
                    var options = qtbus_nats_options()
                    options.prefix = prefix
                    return make(options, &out)
                }
            } else {
                status = make(qtbus_nats_options(), &out)
            }
            guard status >= 0, let out else { return .failure(_qtnError(status, since: before)) }
            return .success(_QTNPointer(raw: out))
        }
        return try result.get()
    }

    private func exportCall(_ type: String, _ call: String) {
        let done: Void? = state.using { bridge in
            let before = qtshim_failures()
            let status = type.withCString { qtbus_nats_export(bridge, $0) }
            // EINVAL the checks above left to the library, ECLOSED (a bus destroyed behind
            // its QTEventBus), ENOMEM: a call that does not throw traps on them.
            if status < 0 { _qtnRefused(call, status, since: before) }
        }
        if done == nil { _qtMisuse(call, "the bridge is closed") }
    }

    private func importCall(_ call: String, _ body: @escaping @Sendable (OpaquePointer) -> Int32)
        async throws(QTBusError)
    {
        let state = state
        let result: Result<Void, QTBusError> = await blocking {
            let outcome: Result<Void, QTBusError>? = state.using { bridge in
                let before = qtshim_failures()
                let status = body(bridge)
                if status >= 0 { return .success(()) }
                // EINVAL the checks above left to the library, ECLOSED (a bus destroyed
                // behind its QTEventBus): trapped, as QTEventBus's calls do; EIO and
                // ENOMEM are thrown.
                if status == QTBUS_EINVAL.rawValue || status == QTBUS_ECLOSED.rawValue {
                    _qtnRefused(call, status, since: before)
                }
                return .failure(_qtnError(status, since: before))
            }
            return outcome ?? .failure(QTBusError(.closed))
        }
        if case .failure(let error) = result, error.code == .closed { _qtMisuse(call, "the bridge is closed") }
        try result.get()
    }

    /// An unexport or unimport: true when undone, false for QTBUS_ESTALE (nothing to
    /// undo) or a closed bridge; any other refusal traps (the names were checked).
    private func undo(_ call: String, _ body: (OpaquePointer) -> Int32) -> Bool {
        state.using { bridge in
            let before = qtshim_failures()
            let status = body(bridge)
            if status == QTBUS_ESTALE.rawValue { return false }
            if status < 0 { _qtnRefused(call, status, since: before) }
            return true
        } ?? false
    }
}
