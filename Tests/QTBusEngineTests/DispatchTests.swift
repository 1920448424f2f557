// SPDX-License-Identifier: MIT
// The dispatch path through the public entry points: what a handler sees, return
// values, argument checks, stop, re-entrancy, subscriptions made during a dispatch,
// QTNoSubscriberEvent, JSON events, bus-queue posts and concurrent dispatchers.
import QTEventBusTestSupport
import Testing
import Glibc
import CQtbusShims
@testable import QTBusEngine

extension Engine {
    @Suite("Dispatch")
    struct DispatchTests {

        @Test("a handler sees type, subtype, data, size and object; dispatch returns the count")
        func eventView() {
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            let seen = LockedValue<[String]>([])
            let sizes = LockedValue<[Int]>([])
            let objects = LockedValue<[UnsafeMutableRawPointer?]>([])
            let p = Probe("p")
            p.action = { ev in
                seen.value.append("\(eventType(ev) ?? "nil")|\(eventSubtype(ev) ?? "nil")|\(eventData(ev))")
                var size = -1
                let data = _qtbus_event_data(ev, &size)
                sizes.value.append(size)
                if size == 0 { #expect(data == nil, "data is NULL when size is 0") }
                objects.value.append(_qtbus_event_object(ev))
            }
            mustSubscribe(bus, "View", p)
            let q = Probe("q")
            mustSubscribe(bus, "View", q, release: false)
            let counter = ObjectCounter()
            #expect(
                dispatch(
                    bus, "View", subtype: "alice", data: "hello", object: counter.pointer,
                    release: objectRelease) == 2)
            #expect(counter.releases == 1, "object released once, after the last delivery")
            #expect(dispatch(bus, "View") == 2)
            #expect(seen.value == ["View|alice|hello", "View|nil|"])
            #expect(sizes.value == [5, 0])
            #expect(objects.value == [counter.pointer, nil])
            // The accessors with NULL.
            var size = 7
            #expect(_qtbus_event_type(nil) == nil)
            #expect(_qtbus_event_subtype(nil) == nil)
            #expect(_qtbus_event_data(nil, &size) == nil && size == 0)
            #expect(_qtbus_event_object(nil) == nil)
            #expect(_qtbus_event_stop(nil) == EINVAL)
            withExtendedLifetime([p, q, counter] as [AnyObject]) {}
        }

        @Test("malformed dispatches are EINVAL, deliver nothing and do not take the object")
        func badDispatch() {
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            let p = Probe("p")
            mustSubscribe(bus, "Bad", p)
            let counter = ObjectCounter()
            #expect(_qtbus_dispatch(nil, nil) == EINVAL)
            #expect(_qtbus_dispatch(bus, nil) == EINVAL)
            var desc = qtbus_event_desc()
            desc.object = counter.pointer
            desc.object_release = objectRelease
            #expect(_qtbus_dispatch(bus, &desc) == EINVAL, "NULL type")
            "Bad".withCString { t in
                desc.type = t
                desc.size = 4  // data NULL with size > 0
                #expect(_qtbus_dispatch(bus, &desc) == EINVAL)
                desc.size = 0
                desc.flags = 1 << 7  // unknown flag
                #expect(_qtbus_dispatch(bus, &desc) == EINVAL)
                desc.flags = 0
                "".withCString { empty in
                    desc.subtype = empty
                    #expect(_qtbus_dispatch(bus, &desc) == EINVAL, "empty subtype")
                }
                desc.subtype = nil
                #expect(_qtbus_dispatch(nil, &desc) == EINVAL, "NULL bus")
            }
            #expect(p.calls == 0)
            #expect(counter.releases == 0, "a failing dispatch never calls object_release")
            #expect(dispatch(bus, "Bad", object: counter.pointer, release: objectRelease) == 1)
            #expect(counter.releases == 1)
            withExtendedLifetime([p, counter] as [AnyObject]) {}
        }

        @Test("qtbus_event_stop ends the delivery; a nested dispatch's stop does not end the outer one")
        func stop() {
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            let log = Recorder<String>()
            let a = Probe("a", log), b = Probe("b", log), c = Probe("c", log)
            let ia = Probe("ia", log), ib = Probe("ib", log)
            b.action = { ev in
                #expect(_qtbus_event_stop(ev) == OK)
                #expect(dispatch(bus, "Inner", data: "x") == 1, "inner stopped after its first handler")
            }
            ia.action = { ev in #expect(_qtbus_event_stop(ev) == OK) }
            mustSubscribe(bus, "Stop", a, priority: 3)
            mustSubscribe(bus, "Stop", b, priority: 2)
            mustSubscribe(bus, "Stop", c, priority: 1)
            mustSubscribe(bus, "Inner", ia)
            mustSubscribe(bus, "Inner", ib)
            #expect(dispatch(bus, "Stop", data: "1") == 2)
            #expect(log.values == ["a:1", "b:1", "ia:x"])
            withExtendedLifetime([a, b, c, ia, ib]) {}
        }

        @Test("a dispatch inside a handler is delivered at once, depth-first")
        func depthFirst() {
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            let log = Recorder<String>()
            let a1 = Probe("a1", log), a2 = Probe("a2", log), b1 = Probe("b1", log), b2 = Probe("b2", log)
            let c1 = Probe("c1", log)
            a1.action = { _ in #expect(dispatch(bus, "B", data: "b") == 2) }
            let cResults = LockedValue<[Int32]>([])
            b1.action = { _ in cResults.value.append(dispatch(bus, "C", data: "c")) }
            c1.action = { _ in #expect(dispatch(bus, "A", data: "again") == 2) }  // re-enter A once
            mustSubscribe(bus, "A", a1)
            mustSubscribe(bus, "A", a2)
            mustSubscribe(bus, "B", b1)
            mustSubscribe(bus, "B", b2)
            let c1Token = mustSubscribe(bus, "C", c1, flags: ONCE)
            #expect(dispatch(bus, "A", data: "a") == 2)
            #expect(log.values == ["a1:a", "b1:b", "c1:c", "a1:again", "b1:b", "b2:b", "a2:again", "b2:b", "a2:a"])
            // In completion order: the nested C dispatch (C already fired) returns first.
            #expect(cResults.value == [0, 1], "C is ONCE: its second dispatch reaches nobody")
            #expect(_qtbus_token_is_active(c1Token) == 0)
            withExtendedLifetime([a1, a2, b1, b2, c1]) {}
        }

        @Test("a subscription made during a dispatch does not receive that dispatch, but the next")
        func subscribeDuringDispatch() {
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            let log = Recorder<String>()
            let first = Probe("first", log), added = Probe("added", log), addedSub = Probe("addedSub", log)
            let addedHigh = Probe("addedHigh", log)
            let once = LockedValue(true)
            first.action = { _ in
                guard once.value else { return }
                once.value = false
                mustSubscribe(bus, "During", added, priority: -1)  // would run after `first`
                mustSubscribe(bus, "During", addedSub, subtypes: ["s"])  // new subtype entry
                mustSubscribe(bus, "During", addedHigh, priority: 100)  // before the walk position
            }
            mustSubscribe(bus, "During", first)
            #expect(dispatch(bus, "During", subtype: "s", data: "1") == 1)
            #expect(dispatch(bus, "During", subtype: "s", data: "2") == 4)
            #expect(log.values == ["first:1", "addedHigh:2", "addedSub:2", "first:2", "added:2"])
            withExtendedLifetime([first, added, addedSub, addedHigh]) {}
        }

        @Test("subtype filtering: named subtypes only; whole-type subscriptions get every event")
        func subtypeFiltering() {
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            let log = Recorder<String>()
            let whole = Probe("whole", log), ab = Probe("ab", log)
            mustSubscribe(bus, "Filter", whole)
            mustSubscribe(bus, "Filter", ab, subtypes: ["a", "b"])
            #expect(dispatch(bus, "Filter", subtype: "a", data: "1") == 2)
            #expect(dispatch(bus, "Filter", subtype: "b", data: "2") == 2)
            #expect(dispatch(bus, "Filter", subtype: "c", data: "3") == 1)
            #expect(dispatch(bus, "Filter", data: "4") == 1)
            #expect(dispatch(bus, "Filter2", subtype: "a", data: "5") == 0)
            #expect(log.values == ["ab:1", "whole:1", "ab:2", "whole:2", "whole:3", "whole:4"])
            #expect(countSubscribers(bus, "Filter") == 2)
            #expect(countSubscribers(bus, "Filter", "a") == 2)
            #expect(countSubscribers(bus, "Filter", "c") == 1)
            #expect(countSubscribers(bus, "Filter2") == 0)
            #expect(countSubscribers(nil, "Filter") == EINVAL)
            withExtendedLifetime([whole, ab]) {}
        }

        @Test("an event nobody receives is re-dispatched as QTNoSubscriberEvent, subtype = its type")
        func noSubscriber() {
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            let seen = LockedValue<[String]>([])
            let nobody = Probe("nobody")
            nobody.action = { ev in
                seen.value.append("\(eventType(ev) ?? "nil")|\(eventSubtype(ev) ?? "nil")|\(eventData(ev))")
            }
            let counter = ObjectCounter()
            // Before anyone listens: nothing happens, the object is released at once.
            #expect(dispatch(bus, "Lonely", data: "0", object: counter.pointer, release: objectRelease) == 0)
            #expect(counter.releases == 1)
            mustSubscribe(bus, QTBUS_NO_SUBSCRIBER_TYPE, nobody)
            let heard = Probe("heard")
            mustSubscribe(bus, "Heard", heard)
            #expect(
                dispatch(
                    bus, "Lonely", subtype: "sub", data: "payload", object: counter.pointer,
                    release: objectRelease) == 0)
            #expect(counter.releases == 2)
            #expect(dispatch(bus, "Heard", data: "x") == 1)
            #expect(seen.value == ["QTNoSubscriberEvent|Lonely|payload"])
            #expect(heard.calls == 1)
            // A QTNoSubscriberEvent nobody receives is not re-dispatched again (no loop).
            let other = newBus()
            #expect(dispatch(other, QTBUS_NO_SUBSCRIBER_TYPE, data: "z") == 0)
            #expect(_qtbus_bus_destroy(other) == OK)
            withExtendedLifetime([nobody, heard, counter] as [AnyObject]) {}
        }

        @Test("JSON events: delivered NUL-terminated under QTJsonEvent/name; invalid text is EJSON")
        func json() {
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            let seen = LockedValue<[String]>([])
            let p = Probe("json")
            p.action = { ev in
                var size = 0
                let data = _qtbus_event_data(ev, &size)!
                #expect(data.load(fromByteOffset: size, as: UInt8.self) == 0, "NUL after the text")
                seen.value.append("\(eventSubtype(ev) ?? "nil")=\(eventData(ev))")
            }
            mustSubscribe(bus, QTBUS_JSON_TYPE, p, subtypes: ["login"])
            #expect(_qtbus_dispatch_json(bus, "login", #"{"user":"alice"}"#) == 1)
            #expect(_qtbus_dispatch_json(bus, "login", "{bad}") == EJSON)
            #expect(_qtbus_dispatch_json(bus, "other", "[1]") == 0)
            #expect(_qtbus_dispatch_json(bus, "", "1") == EINVAL)
            #expect(_qtbus_dispatch_json(bus, "login", nil) == EINVAL)
            #expect(seen.value == [#"login={"user":"alice"}"#])
            withExtendedLifetime(p) {}
        }

        @Test("posts to the bus queue are delivered in order, each object released once")
        func busQueueOrder() {
            let bus = newBus()
            let log = Recorder<String>()
            let p = Probe("q", log)
            mustSubscribe(bus, "Posted", p)
            let counter = ObjectCounter()
            for i in 0..<100 {
                let status = "Posted".withCString { t in
                    "\(i)".withCString { d in
                        var desc = qtbus_event_desc(
                            type: t, subtype: nil, data: UnsafeRawPointer(d),
                            size: strlen(d), object: counter.pointer,
                            object_release: objectRelease, flags: 0, headers: nil, header_count: 0)
                        return _qtbus_dispatch_on_bus_queue(bus, &desc)
                    }
                }
                #expect(status == OK)
            }
            #expect(waitUntil { counter.releases == 100 }, "all posts ran")
            #expect(log.values == (0..<100).map { "q:\($0)" })
            #expect(counter.releases == 100)
            #expect(_qtbus_bus_destroy(bus) == OK)
            settle()
            withExtendedLifetime([p, counter] as [AnyObject]) {}
        }

        @Test("four threads dispatching at once: every delivery counted, ONCE delivered exactly once")
        func concurrentDispatchers() {
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            let plain = Probe("plain"), once = Probe("once")
            mustSubscribe(bus, "Conc", plain)
            let onceToken = mustSubscribe(bus, "Conc", once, flags: ONCE)
            let start = OneShotFlag()
            let sums = (0..<4).map { _ in LockedValue<Int32>(0) }
            let threads = sums.map { sum in
                TestThread {
                    start.wait()
                    for _ in 0..<500 { sum.value += dispatch(bus, "Conc") }
                }
            }
            start.set()
            for t in threads { #expect(t.join(15)) }
            #expect(plain.calls == 2000)
            #expect(once.calls == 1)
            #expect(sums.reduce(0) { $0 + $1.value } == 2001, "return values count each delivery")
            #expect(once.releases == 1)
            #expect(_qtbus_token_is_active(onceToken) == 0)
            withExtendedLifetime([plain, once]) {}
        }

        @Test("main-thread-only calls are EINVAL elsewhere; queue calls tolerate NULL and the main queue")
        func mainThreadOnly() {
            #expect(currentTID() != getpid(), "Swift Testing runs this off the main thread")
            #expect(_qtbus_main_drain() == EINVAL)
            #expect(_qtbus_main_wait(0) == EINVAL)
            #expect(_qtbus_main_wait(-1) == EINVAL, "returns at once instead of waiting")
            _ = _qtbus_main_fd()  // -1 here: the test runner parked the main thread in dispatch_main()
            #expect(_qtbus_queue_main() == _qtbus_queue_main())
            _qtbus_queue_release(nil)
            _qtbus_queue_release(_qtbus_queue_main())  // static: ignored
            #expect(_qtbus_shared() == _qtbus_shared())
        }

        @Test("strerror and version")
        func statusStrings() {
            #expect(String(cString: _qtbus_strerror(OK)) == "success")
            #expect(String(cString: _qtbus_strerror(ESTALE)) == "unknown or already disposed handle")
            #expect(String(cString: _qtbus_strerror(12345)) == "unknown qtbus status")
            #expect(String(cString: _qtbus_version()) == QTBUS_VERSION_STRING)
        }
    }
}
