// SPDX-License-Identifier: MIT
// Requests and replies (SXMessageTransfer) over qtbus_request: the sender side on the
// bus, the receiver side on the subscription maker.
//
// A request is an ordinary dispatch of the event (same order, priorities, subtypes,
// queues, typed value and bytes) with the engine's request attached, so plain `next`
// subscribers observe it like any event, and C handlers reply to a Swift request (and
// Swift ones to a C request) through the same engine calls. The sender's userdata is a
// retained `_QTRequestBox`; the engine's release hook is the completion.
import CQtbusShims
import Dispatch
import QTBusEngine

/// The sender's callbacks: the engine's userdata for one request.
final class _QTRequestBox: @unchecked Sendable {
    // @unchecked: immutable after init.
    let onReply: (@Sendable (QTReply) -> Void)?
    let completion: (@Sendable () -> Void)?

    init(onReply: (@Sendable (QTReply) -> Void)?, completion: (@Sendable () -> Void)?) {
        self.onReply = onReply
        self.completion = completion
    }
}

/// The engine's reply handler for Swift requests.
let _qtReplyHandler: qtbus_reply_handler = { reply, userdata in
    // Borrowed: the engine keeps the userdata until the release hook, after every reply.
    Unmanaged<_QTRequestBox>.fromOpaque(userdata.unsafelyUnwrapped)
        ._withUnsafeGuaranteedRef { $0.onReply?(QTReply(copying: reply.unsafelyUnwrapped)) }
}

/// The engine's release hook for Swift requests: the completion.
let _qtRequestRelease: qtbus_release = { userdata in
    Unmanaged<_QTRequestBox>.fromOpaque(userdata.unsafelyUnwrapped).takeRetainedValue().completion?()
}

extension QTEventBus {
    // MARK: Sending

    /// Sends `event` as a request: it is dispatched as ``dispatch(_:sticky:)`` does, and
    /// every handler that receives it may answer (``QTRequestContext/reply(_:)`` in Swift,
    /// `qtbus_event_reply` in C).
    ///
    /// ```swift
    /// bus.request(LoginRequest(account: "alice", pwd: "secret"),
    ///             onReply: { reply in print(reply.string) },      // "login ok"
    ///             completion: { print("every handler has run") })
    /// ```
    ///
    /// - `onReply` runs once per reply, at once, on the replying thread: in handler order
    ///   for handlers without a queue, and possibly on several threads at once when
    ///   handlers run on several queues.
    /// - `completion` runs exactly once, after the last handler that received the
    ///   request has returned, `atQueue` handlers included (on that handler's thread);
    ///   when every handler runs without a queue it has run before this returns. No
    ///   reply comes after it. A request that reaches nobody completes at once.
    ///
    /// An invalid subtype or ``QTEvent/eventName`` (``isValidName(_:)``) is a programmer
    /// error and traps, as in ``dispatch(_:sticky:)``; then neither callback runs.
    ///
    /// - Returns: the number of handlers reached (as ``dispatch(_:sticky:)``): a count,
    ///   never a refusal.
    @discardableResult
    public func request<E: QTEvent>(
        _ event: E, onReply: (@Sendable (QTReply) -> Void)?,
        completion: (@Sendable () -> Void)? = nil
    ) -> Int {
        let call = "request(_:onReply:completion:)"
        let before = QTBusError.failuresSoFar
        let status = _requestTyped(event, call, onReply, completion)
        if status < 0 { _qtRefused(call, status, since: before) }
        return Int(status)
    }

    /// Sends `event` as a request and returns its replies, in the order they were made,
    /// once the request has completed (every handler has run; see
    /// ``request(_:onReply:completion:)``). A request nobody answered gives `[]`.
    ///
    /// ```swift
    /// let replies = try await bus.request(LoginRequest(account: "alice", pwd: "secret"))
    /// print(replies.map(\.string))                                 // ["login ok"]
    /// ```
    ///
    /// An invalid subtype or ``QTEvent/eventName`` (``isValidName(_:)``) is a programmer
    /// error and traps, as in ``dispatch(_:sticky:)``, cancelled task or not.
    ///
    /// - Throws: ``QTBusError`` when the bus refuses the request at run time
    ///   (``QTBusError/outOfMemory``), and nothing was sent; `CancellationError` as soon
    ///   as the calling task is cancelled (then, or before it was sent). Handlers
    ///   already running finish, their late replies are dropped, and the request's
    ///   completion still runs exactly once, later.
    /// - Parameters:
    ///   - event: the request, dispatched as ``dispatch(_:sticky:)`` does.
    ///   - timeout: how long to wait for the completion; when it passes, the replies
    ///     received so far are returned (handlers still running finish, their late
    ///     replies are dropped). `nil`: wait for the completion.
    public func request<E: QTEvent>(_ event: E, timeout: Duration? = nil) async throws -> [QTReply] {
        try await _requestTypedCollecting(event, "request(_:timeout:)", timeout)
    }

    /// ``request(_:timeout:)``, with each reply decoded as `V`; replies that do not
    /// decode are left out.
    public func request<E: QTEvent, V: QTBytesConvertible>(
        _ event: E, replyAs type: V.Type,
        timeout: Duration? = nil
    ) async throws -> [V] {
        try await _requestTypedCollecting(event, "request(_:replyAs:timeout:)", timeout).compactMap {
            $0.value(as: V.self)
        }
    }

    /// Sends a request of the named type `type` (as C's `qtbus_request` does) with
    /// `bytes` as its data, NUL-terminated for C readers (the NUL not counted); see
    /// ``request(_:onReply:completion:)``. An invalid `type` or `subType`
    /// (``isValidName(_:)``) traps.
    @discardableResult
    public func request(
        named type: String, subType: String? = nil, bytes: [UInt8] = [],
        onReply: (@Sendable (QTReply) -> Void)?, completion: (@Sendable () -> Void)? = nil
    ) -> Int {
        let call = "request(named:subType:bytes:onReply:completion:)"
        let before = QTBusError.failuresSoFar
        let status = _requestNamed(type, subType, bytes, call, onReply, completion)
        if status < 0 { _qtRefused(call, status, since: before) }
        return Int(status)
    }

    /// ``request(_:timeout:)`` for the named type `type`.
    public func request(
        named type: String, subType: String? = nil, bytes: [UInt8] = [],
        timeout: Duration? = nil
    ) async throws -> [QTReply] {
        let call = "request(named:subType:bytes:timeout:)"
        _qtRequireRequestNames(type, subType, call)
        return try await _collect(timeout: timeout, call) { onReply, completion in
            _requestNamed(type, subType, bytes, call, onReply, completion)
        }
    }

    /// The typed awaited requests: the names are checked first, whether or not the task
    /// is cancelled.
    func _requestTypedCollecting<E: QTEvent>(
        _ event: E, _ call: String, _ timeout: Duration?, headers: [String: String]? = nil
    ) async throws -> [QTReply] {
        _ = _qtRequireRequestEvent(event, call)
        return try await _collect(timeout: timeout, call) { onReply, completion in
            _requestTyped(event, call, onReply, completion, headers: headers)
        }
    }

    /// Sends the typed request `event` for `call`, with `headers` if not nil; traps on an
    /// invalid name or header, returns the engine status otherwise (the caller traps on
    /// it or throws it).
    func _requestTyped<E: QTEvent>(
        _ event: E, _ call: String, _ onReply: (@Sendable (QTReply) -> Void)?,
        _ completion: (@Sendable () -> Void)?, headers: [String: String]? = nil
    ) -> Int32 {
        let record = _QTTypeRecord.of(E.self)
        let cName = _qtRequireRequestEvent(event, call)
        let subType = event.eventSubType
        var bytes: [UInt8]? = nil
        if record.pointee.isBytes, let bytesEvent = event as? any QTBytesEvent { bytes = bytesEvent.eventBytes }
        let object = _qtMakeCell(event)
        let status = _qtRequest(
            raw, cName, subType, bytes, object, _QTRequestBox(onReply: onReply, completion: completion),
            headers, call)
        if status < 0 { _qtFreeCell(object) }
        return status
    }

    /// Sends the named request for `call`, with `headers` if not nil; traps on an invalid
    /// name or header, returns the engine status otherwise.
    func _requestNamed(
        _ type: String, _ subType: String?, _ bytes: [UInt8], _ call: String,
        _ onReply: (@Sendable (QTReply) -> Void)?, _ completion: (@Sendable () -> Void)?,
        headers: [String: String]? = nil
    ) -> Int32 {
        _qtRequireRequestNames(type, subType, call)
        return type.withCString { cName in
            _qtRequest(
                raw, cName, subType, bytes, nil, _QTRequestBox(onReply: onReply, completion: completion), headers,
                call)
        }
    }

    /// Collects the replies of the request `send` makes, until its completion, the
    /// timeout or the task's cancellation, whichever comes first.
    func _collect(
        timeout: Duration?, _ call: String,
        _ send: (@escaping @Sendable (QTReply) -> Void, @escaping @Sendable () -> Void) -> Int32
    )
        async throws -> [QTReply]
    {
        try Task.checkCancellation()  // cancelled already: send nothing
        let collector = _QTReplyCollector()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard collector.install(continuation) else { return }  // cancelled meanwhile
                let before = QTBusError.failuresSoFar
                let status = send({ collector.add($0) }, { collector.finish(.completed) })
                if status < 0 {
                    // A failed request took nothing: its completion will not run.
                    if status == QTBUS_EINVAL.rawValue { _qtRefused(call, status, since: before) }
                    collector.finish(.failed(QTBusError(status: status, since: before) ?? QTBusError(.other(status))))
                } else if let timeout {
                    let (seconds, attoseconds) = timeout.components
                    let nanoseconds = max(0, seconds) * 1_000_000_000 + max(0, attoseconds) / 1_000_000_000
                    DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(clamping: nanoseconds))) {
                        collector.finish(.timedOut)
                    }
                }
            }
        } onCancel: {
            collector.finish(.cancelled)
        }
    }
    // MARK: Receiving (used by the makers of `on`)

    /// Subscribes to the typed event `E` with a handler that gets a request context.
    @usableFromInline
    func _subscribeTypedRequest<E: QTEvent>(
        _ type: E.Type, options: _QTSubscribeOptions,
        handler: @escaping @Sendable (E, QTRequestContext) -> Void
    ) -> QTEventToken {
        _ = _qtRequireTypeName(E.self, "\(options.call)")
        let record = _QTTypeRecord.of(E.self)
        return _subscribe(
            name: record.pointee.names.takeUnretainedValue(), options: options,
            source: _qtSourceStart(E.self)
        ) { sourceEnd in
            _QTRequestSubscription(
                value: _qtTypedValue(E.self), requestHandler: handler,
                extras: _QTSubscriptionExtras.make(options: options, bus: raw, sourceEnd: sourceEnd))
        }
    }

    /// Subscribes to the named type `type` with a handler that gets a request context.
    func _subscribeNamedRequest(
        _ type: String, options: _QTSubscribeOptions,
        handler: @escaping @Sendable (QTNamedEvent, QTRequestContext) -> Void
    ) -> QTEventToken {
        _subscribe(name: _QTNameInfo.forName(type), options: options, source: nil) { sourceEnd in
            _QTRequestSubscription(
                value: { QTNamedEvent(copying: $0) }, requestHandler: handler,
                extras: _QTSubscriptionExtras.make(options: options, bus: raw, sourceEnd: sourceEnd))
        }
    }
}

/// The engine name of the typed request `event`; traps unless it and the event's
/// subtype are valid names: a programmer error of `call`.
private func _qtRequireRequestEvent<E: QTEvent>(_ event: E, _ call: String) -> UnsafePointer<CChar> {
    let cName = _qtRequireTypeName(E.self, call)
    if let subType = event.eventSubType {
        _qtRequireName(subType, .subtype, "\(call) of \(String(reflecting: E.self))")
    }
    return cName
}

/// Traps unless `type` and `subType` are valid names: a programmer error of `call`.
func _qtRequireRequestNames(_ type: String, _ subType: String?, _ call: String) {
    _qtRequireName(type, .type, call)
    if let subType { _qtRequireName(subType, .subtype, call) }
}

/// The one call of `qtbus_request`: `bytes` (if any) as the data, NUL-terminated, and
/// `headers` if not nil (a bad one traps, naming `call`). On failure the
/// engine took nothing: the box is dropped without its completion, and the caller frees
/// `object`.
private func _qtRequest(
    _ bus: OpaquePointer, _ type: UnsafePointer<CChar>, _ subType: String?, _ bytes: [UInt8]?,
    _ object: UnsafeMutableRawPointer?, _ box: _QTRequestBox, _ headers: [String: String]?, _ call: String
) -> Int32 {
    let bytes = bytes ?? []
    let userdata = Unmanaged.passRetained(box).toOpaque()
    func send(_ list: UnsafePointer<qtbus_header>?, _ listCount: Int) -> Int32 {
        _withNULTerminated(bytes) { base, count -> Int32 in
            func send(_ sub: UnsafePointer<CChar>?) -> Int32 {
                var desc = qtbus_event_desc(
                    type: type, subtype: sub, data: base, size: count, object: object,
                    object_release: object == nil ? nil : _qtEventCellRelease,
                    flags: headers == nil ? 0 : UInt32(QTBUS_EVENT_HEADERS), headers: list, header_count: listCount)
                return _qtbus_request(
                    bus, &desc, box.onReply == nil ? nil : _qtReplyHandler, userdata, _qtRequestRelease)
            }
            guard let subType else { return send(nil) }
            return subType.withCString { send($0) }
        }
    }
    let status = headers.map { _qtWithHeaders($0, call, send) } ?? send(nil, 0)
    if status < 0 { Unmanaged<_QTRequestBox>.fromOpaque(userdata).release() }
    return status
}

/// Reads the typed value `E` out of an engine event: the Swift value a Swift dispatch
/// carries, or one decoded from the bytes (``QTBytesEvent``) of a C dispatch.
func _qtTypedValue<E: QTEvent>(_: E.Type) -> @Sendable (OpaquePointer) -> E? {
    { event in
        if let value = _qtCellValue(E.self, in: event) { return value.pointee }
        guard let bytesType = E.self as? any QTBytesEvent.Type else { return nil }
        var size = 0
        let data = _qtbus_event_data(event, &size)
        let subType = _qtbus_event_subtype(event).map { String(cString: $0) }
        return bytesType.init(eventBytes: UnsafeRawBufferPointer(start: data, count: size), subType: subType) as? E
    }
}

/// A `nextRequest` subscription: its delivery reads the value and gives the handler a
/// context holding the request (if the event is one) until the handler, after its hop,
/// has returned.  The inherited plain handler is unused (every delivery takes this slow
/// path: requests are not the hot path).
final class _QTRequestSubscription<V: Sendable>: _QTHandlerSubscription<V>, @unchecked Sendable {
    // @unchecked: immutable after init but for `calls`, which only the release hook
    // writes, after the engine's last call.
    private let storedExtras: _QTSubscriptionExtras?
    /// The closures, the user's among them; nil once released, so that a token kept
    /// after the subscription ended holds none (a hop carries its own reference).
    @exclusivity(unchecked) private var calls: _QTRequestCalls<V>?

    init(
        value: @escaping @Sendable (OpaquePointer) -> V?,
        requestHandler: @escaping @Sendable (V, QTRequestContext) -> Void, extras: _QTSubscriptionExtras?
    ) {
        storedExtras = extras
        calls = _QTRequestCalls(value: value, requestHandler: requestHandler)
        super.init(deliver: _qtSlowDeliverFunction, handler: { _ in })
    }

    override var extras: _QTSubscriptionExtras? { storedExtras }

    override var owner: AnyObject? { storedExtras?.owner }

    override func slowDeliver(_ event: OpaquePointer) {
        guard let calls, let v = calls.value(event) else { return }
        let held = _QTHeldRequest(event)
        let extras = storedExtras
        guard let queue = extras?.queue else {
            QTRequestContext.run(held, v, calls.requestHandler)
            return
        }
        queue.async { [self] in
            guard hopMayRun(extras) else {
                held?.release()
                return
            }
            QTRequestContext.run(held, v, calls.requestHandler)
        }
    }

    override func released() {
        super.released()
        calls = nil
    }
}

/// What a `_QTRequestSubscription` calls.
final class _QTRequestCalls<V: Sendable>: Sendable {
    let value: @Sendable (OpaquePointer) -> V?
    let requestHandler: @Sendable (V, QTRequestContext) -> Void

    init(
        value: @escaping @Sendable (OpaquePointer) -> V?,
        requestHandler: @escaping @Sendable (V, QTRequestContext) -> Void
    ) {
        self.value = value
        self.requestHandler = requestHandler
    }
}

extension QTEventSubscriberMaker {
    /// Subscribes `handler`, which also gets the request context of each delivery, to
    /// answer requests (``QTEventBus/request(_:onReply:completion:)``, C's
    /// `qtbus_request`); see ``QTRequestContext``.
    ///
    /// ```swift
    /// bus.on(LoginRequest.self).priority(700).atQueue(authQueue).nextRequest { login, request in
    ///     request.reply(login.pwd == "secret" ? "login ok" : "bad credentials")
    /// }
    /// ```
    ///
    /// It receives every event of the subscription as ``next(_:)-33cel`` does (plain
    /// dispatches too: ``QTRequestContext/isRequest`` is then false). With
    /// ``atQueue(_:)`` the handler runs on the queue and replies from there; the
    /// request's completion waits for it. A maker made by ``map(_:)`` has lost the
    /// engine event: its handler gets a context that is not a request.
    @discardableResult
    public func nextRequest(_ handler: @escaping @Sendable (Event, QTRequestContext) -> Void) -> QTEventToken {
        _nextRequest(.nextRequest, handler)
    }

    private func _nextRequest(
        _ call: _QTSubscribeCall, _ handler: @escaping @Sendable (Event, QTRequestContext) -> Void
    )
        -> QTEventToken
    {
        var options = self.options
        options.call = call
        if let installRequest { return installRequest(bus, options, handler) }
        return install(bus, options) { event in QTRequestContext.run(nil, event, handler) }
    }

    /// Subscribes a handler that answers each request with the values it returns, in
    /// order (none: an empty array). Events that are not requests do not call `answer`.
    ///
    /// ```swift
    /// bus.on(LoginRequest.self).priority(700).reply { login in
    ///     [login.pwd == "secret" ? "login ok" : "bad credentials"]
    /// }
    /// ```
    @discardableResult
    public func reply<V: QTBytesConvertible>(_ answer: @escaping @Sendable (Event) -> [V]) -> QTEventToken {
        _nextRequest(.reply) { event, request in
            guard request.isRequest else { return }
            for value in answer(event) { request.reply(value) }
        }
    }
}

/// The replies of one awaited request, and the one way it ends: completed, timed out,
/// cancelled or refused, whichever comes first; later replies and endings are dropped.
final class _QTReplyCollector: Sendable {
    enum Ending {
        case completed, timedOut, cancelled
        case failed(QTBusError)
    }

    private struct State {
        var replies: [QTReply] = []
        var continuation: CheckedContinuation<[QTReply], any Error>? = nil
        var ending: Ending? = nil
    }

    private let state = _QTLocked(State())

    /// Before the request is sent (a synchronous handler may reply at once).  False
    /// when it ended already (cancelled meanwhile): the continuation was resumed, and
    /// nothing is to be sent.
    func install(_ continuation: CheckedContinuation<[QTReply], any Error>) -> Bool {
        let ended: Ending? = state.withLock { s in
            if s.ending == nil { s.continuation = continuation }
            return s.ending
        }
        guard let ended else { return true }
        Self.resume(continuation, ended, [])
        return false
    }

    func add(_ reply: QTReply) {
        state.withLock { s in if s.ending == nil { s.replies.append(reply) } }
    }

    func finish(_ ending: Ending) {
        let (continuation, replies): (CheckedContinuation<[QTReply], any Error>?, [QTReply]) = state.withLock { s in
            guard s.ending == nil else { return (nil, []) }
            s.ending = ending
            let c = s.continuation
            s.continuation = nil
            return (c, s.replies)
        }
        if let continuation { Self.resume(continuation, ending, replies) }
    }

    private static func resume(
        _ continuation: CheckedContinuation<[QTReply], any Error>, _ ending: Ending,
        _ replies: [QTReply]
    ) {
        switch ending {
        case .completed, .timedOut: continuation.resume(returning: replies)
        case .cancelled: continuation.resume(throwing: CancellationError())
        case .failed(let error): continuation.resume(throwing: error)
        }
    }
}
