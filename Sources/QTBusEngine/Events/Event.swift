// SPDX-License-Identifier: MIT
// The event a handler receives (EventView: what `const qtbus_event *` points to) and
// the event being dispatched (Outgoing: names, data, and who owns the object).
import CQtbusShims
import CQtbusLibc

/// What a handler's `const qtbus_event *` points to.  `@usableFromInline` so the Swift
/// API's delivery closures can read the object inline (`_qtEngineEventObject`).
@usableFromInline
struct EventView {
    var type: UnsafePointer<CChar>
    var subtype: UnsafePointer<CChar>?
    var data: UnsafeRawPointer?
    var size: Int
    @usableFromInline var object: UnsafeMutableRawPointer?
    var stopped = false
    /// Delivered after its dispatch returned (queue, replay): it cannot be stopped.
    var queued = false
    /// Dispatched with QTBUS_EVENT_STICKY (qtbus_event_flags).
    var sticky = false
    /// Set when the event is a request (qtbus_request): handlers may reply to it.
    var request: UnsafeMutablePointer<Request>? = nil
    /// Its headers (Headers.swift; nil: none), alive as long as the view.
    var headers: UnsafeMutablePointer<HeaderBlock>? = nil

    init(
        type: UnsafePointer<CChar>, subtype: UnsafePointer<CChar>?, data: UnsafeRawPointer?, size: Int,
        object: UnsafeMutableRawPointer?
    ) {
        self.type = type
        self.subtype = subtype
        self.data = data
        self.size = size
        self.object = object
    }

    init(payload p: UnsafeMutablePointer<Payload>, queued: Bool) {
        self.init(
            type: p.type, subtype: p.subtype, data: p.data, size: p.pointee.size,
            object: p.pointee.object)
        self.queued = queued
        self.sticky = p.pointee.sticky
        self.request = p.pointee.request
        self.headers = p.headers
    }
}

/// The event being dispatched and who owns its object.
struct Outgoing {
    var type: CName
    var subtype: CName?
    var data: UnsafeRawPointer?
    var size: Int
    /// Owned by this dispatch once it succeeds, unless a payload holds it.
    var object: UnsafeMutableRawPointer?
    var objectRelease: qtbus_release?
    /// One reference held by this dispatch; it owns the object when present.
    var payload: UnsafeMutablePointer<Payload>?
    /// The request this dispatch carries, not owned (qtbus_request holds it throughout;
    /// a payload made for it takes a reference of its own).
    var request: UnsafeMutablePointer<Request>? = nil
    /// Its headers, not owned (the dispatch's caller holds them throughout, or the
    /// payload does; a payload made for the event takes a reference of its own).
    var headers: UnsafeMutablePointer<HeaderBlock>? = nil
    /// Set when `object` is only borrowed for the dispatch (a Swift value on the
    /// caller's stack, SwiftAPISupport.swift): nothing releases it, and `objectRelease`
    /// stays nil until `ensurePayload` makes the copy that outlives the dispatch.
    var borrowed: BorrowedObject? = nil
    /// A handler stopped the dispatch (set on that path only, by `deliver`).
    var stopped = false
    /// The dispatch can no longer fail (a sticky event already kept, an event posted or
    /// published earlier, the re-dispatch of one nobody received): an allocation it
    /// would fail for waits for memory instead (PatternDispatch.swift).
    var accepted = false

    init(
        type: CName, subtype: CName?, data: UnsafeRawPointer?, size: Int,
        object: UnsafeMutableRawPointer?, objectRelease: qtbus_release?
    ) {
        self.type = type
        self.subtype = subtype
        self.data = data
        self.size = size
        self.object = object
        self.objectRelease = objectRelease
        self.payload = nil
    }

    /// An event copied earlier; takes the caller's reference to `payload`.
    init(payload p: UnsafeMutablePointer<Payload>) {
        self.init(
            type: payloadTypeName(p), subtype: payloadSubtypeName(p), data: p.data,
            size: p.pointee.size, object: p.pointee.object, objectRelease: nil)
        payload = p
        request = p.pointee.request
        headers = p.headers
        accepted = true
    }

    /// Copies the event once, for deliveries that outlive the dispatch; the payload
    /// takes over the object.  False, with nothing changed, when out of memory.
    @inline(__always)
    mutating func tryEnsurePayload() -> Bool {
        guard payload == nil else { return true }
        if borrowed != nil { return tryEnsureBorrowedPayload() }
        guard
            let p = makePayload(
                type: type, subtype: subtype, data: data, size: size,
                object: object, objectRelease: objectRelease, parent: nil, request: request,
                headers: headers)
        else {
            return false
        }
        payload = p
        objectRelease = nil
        return true
    }

    /// A Swift object borrowed for the dispatch: the payload holds a copy.
    @inline(never)
    private mutating func tryEnsureBorrowedPayload() -> Bool {
        let b = borrowed!
        let copy = b.copy(object)
        guard
            let p = makePayload(
                type: type, subtype: subtype, data: data, size: size,
                object: copy, objectRelease: b.release, parent: nil, request: request,
                headers: headers)
        else {
            b.release(copy)
            return false
        }
        payload = p
        object = copy
        objectRelease = nil
        borrowed = nil
        return true
    }

    /// `tryEnsurePayload` where the dispatch is under way and cannot fail: waits for memory.
    @inline(__always)
    mutating func ensurePayload() {
        if !tryEnsurePayload() { waitToEnsurePayload() }
    }

    /// `ensurePayload` for a delivery to a bounded queue: the copy goes into one of the
    /// queue's blocks when one is free and it fits (PayloadPool.swift).
    mutating func ensurePayload(pool: UnsafeMutablePointer<PayloadPool>) {
        guard payload == nil else { return }
        if borrowed == nil,
            let p = makePooledPayload(
                pool, type: type, subtype: subtype, data: data, size: size,
                object: object, objectRelease: objectRelease, request: request, headers: headers)
        {
            payload = p
            objectRelease = nil
            return
        }
        ensurePayload()
    }

    @inline(never)
    private mutating func waitToEnsurePayload() {
        waitForMemory { tryEnsurePayload() ? () : nil }
    }

    /// Ends this dispatch's ownership: the object goes with the last payload reference.
    mutating func finish() {
        if let p = payload {
            p.release()
        } else if let release = objectRelease {
            release(object)
        }
        payload = nil
        objectRelease = nil
    }
}

extension EventView {
    /// What the handlers of a dispatch under way see of `event` (every walk makes its
    /// view here, so a field added to the view is filled in one place).
    @inline(__always)
    init(_ event: Outgoing) {
        self.init(
            type: event.type.bytes, subtype: event.subtype?.bytes, data: event.data, size: event.size,
            object: event.object)
        request = event.request
        headers = event.headers
        if let p = event.payload, p.pointee.sticky { sticky = true }
    }
}

/// How a borrowed object is copied for deliveries that outlive the dispatch.
struct BorrowedObject {
    /// Returns a copy the engine owns (never nil: the caller cannot fail). It may run
    /// under the registry lock (a sticky keep copies there), so it must not call into
    /// the bus; copying a Swift value runs no user code, only retains.
    let copy: _QTEngineObjectCopy
    /// Releases a copy made by `copy`.
    let release: qtbus_release
}

/// Makes a copy of a borrowed object that outlives the dispatch (SwiftAPISupport.swift explains).
@usableFromInline package typealias _QTEngineObjectCopy =
    @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?
