// SPDX-License-Identifier: MIT
// Sticky events and REPLAY subscriptions (StickyReplay.swift): what is kept, replay order,
// clearing, object lifetime, and the backlog gate (replay, then live, no gap, no
// duplicate).
import QTEventBusTestSupport
import Testing
import Glibc
import CQtbusShims
@testable import QTBusEngine

private let precomposedE: [UInt8] = [0xC3, 0xA9]  // "é"  U+00E9
private let decomposedE: [UInt8] = [0x65, 0xCC, 0x81]  // "é"  U+0065 U+0301

// MARK: - Forcing an interleaving: two threads on one CPU, one of them SCHED_IDLE

/// The state letter of thread `tid` in /proc (R running, S sleeping, ...).
private func threadState(_ tid: Int32) -> Character? {
    guard let f = fopen("/proc/self/task/\(tid)/stat", "r") else { return nil }
    defer { fclose(f) }
    var buf = [CChar](repeating: 0, count: 512)
    guard fgets(&buf, 512, f) != nil else { return nil }
    let line = String(cString: buf)
    guard let close = line.lastIndex(of: ")") else { return nil }
    return line[line.index(close, offsetBy: 2)...].first
}

// sched_{get,set}affinity and SCHED_IDLE are _GNU_SOURCE-only, so Glibc does not import them.
private typealias AffinityFunction = @convention(c) (Int32, Int, UnsafeMutableRawPointer?) -> Int32
private func affinityFunction(_ name: String) -> AffinityFunction? {
    dlsym(UnsafeMutableRawPointer(bitPattern: 0), name).map { unsafeBitCast($0, to: AffinityFunction.self) }
}

/// The first CPU the calling thread may run on.
private func firstAllowedCPU() -> Int? {
    guard let get = affinityFunction("sched_getaffinity") else { return nil }
    var mask = [UInt8](repeating: 0, count: 128)
    guard mask.withUnsafeMutableBytes({ get(0, 128, $0.baseAddress) }) == 0 else { return nil }
    return (0..<(128 * 8)).first { mask[$0 / 8] & (1 << ($0 % 8)) != 0 }
}

/// Pins the calling thread to `cpu`.
private func pinToCPU(_ cpu: Int) -> Bool {
    guard let set = affinityFunction("sched_setaffinity") else { return false }
    var mask = [UInt8](repeating: 0, count: 128)
    mask[cpu / 8] |= UInt8(1 << (cpu % 8))
    return mask.withUnsafeMutableBytes { set(0, 128, $0.baseAddress) } == 0
}

/// SCHED_IDLE (5): a thread that never preempts a normal one on the same CPU.
private func becomeIdleClass() -> Bool {
    var param = sched_param()
    param.sched_priority = 0
    return pthread_setschedparam(pthread_self(), 5, &param) == 0
}

extension Engine {
    @Suite("Sticky")
    struct StickyTests {

        @Test("replay: newest kept event per subtype, oldest first, before qtbus_subscribe returns")
        func replayOrder() {
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            #expect(dispatch(bus, "Sticky", subtype: "a", data: "a1", flags: STICKY) == 0)
            #expect(dispatch(bus, "Sticky", subtype: "b", data: "b1", flags: STICKY) == 0)
            #expect(dispatch(bus, "Sticky", subtype: "a", data: "a2", flags: STICKY) == 0)
            #expect(dispatch(bus, "Sticky", data: "n1", flags: STICKY) == 0)
            #expect(dispatch(bus, "Sticky", subtype: "c", data: "not sticky") == 0)

            let whole = Probe("whole"), onlyA = Probe("a"), ab = Probe("ab"), plain = Probe("plain")
            let stops = LockedValue<[Int32]>([])
            whole.action = { ev in  // only during the replay: a live event would really stop
                if stops.value.count < 3 { stops.value.append(_qtbus_event_stop(ev)) }
            }
            mustSubscribe(bus, "Sticky", whole, flags: REPLAY)
            #expect(whole.log.values == ["whole:b1", "whole:a2", "whole:n1"], "replayed before subscribe returned")
            #expect(stops.value == [EINVAL, EINVAL, EINVAL], "a replayed event cannot be stopped")
            mustSubscribe(bus, "Sticky", onlyA, subtypes: ["a"], flags: REPLAY)
            #expect(onlyA.log.values == ["a:a2"])
            mustSubscribe(bus, "Sticky", ab, subtypes: ["b", "a"], flags: REPLAY)
            #expect(ab.log.values == ["ab:b1", "ab:a2"])
            mustSubscribe(bus, "Sticky", plain)
            #expect(plain.calls == 0, "without REPLAY nothing is replayed")

            // Live delivery after the replay: once, not replayed again.
            #expect(dispatch(bus, "Sticky", subtype: "a", data: "a3", flags: STICKY) == 4)
            #expect(whole.log.values == ["whole:b1", "whole:a2", "whole:n1", "whole:a3"])
            #expect(onlyA.log.values == ["a:a2", "a:a3"])
            #expect(ab.log.values == ["ab:b1", "ab:a2", "ab:a3"])
            #expect(plain.log.values == ["plain:a3"])
            let late = Probe("late")
            mustSubscribe(bus, "Sticky", late, flags: REPLAY)
            #expect(late.log.values == ["late:b1", "late:n1", "late:a3"])
            withExtendedLifetime([whole, onlyA, ab, plain, late]) {}
        }

        @Test("qtbus_sticky_clear drops one subtype or all; cleared events are not replayed")
        func clear() {
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            dispatch(bus, "Clr", subtype: "a", data: "a", flags: STICKY)
            dispatch(bus, "Clr", subtype: "b", data: "b", flags: STICKY)
            dispatch(bus, "Clr", data: "n", flags: STICKY)
            #expect(stickyClear(bus, "Clr", "a") == 1)
            #expect(stickyClear(bus, "Clr", "a") == 0)
            #expect(stickyClear(bus, "Clr", "zz") == 0)
            #expect(stickyClear(bus, "Unknown") == 0)
            let p = Probe("p")
            mustSubscribe(bus, "Clr", p, flags: REPLAY)
            #expect(p.log.values == ["p:b", "p:n"])
            #expect(stickyClear(bus, "Clr") == 2, "NULL subtype: every one, the one without a subtype included")
            let q = Probe("q")
            mustSubscribe(bus, "Clr", q, flags: REPLAY)
            #expect(q.calls == 0)
            #expect(stickyClear(nil, "Clr") == EINVAL)
            withExtendedLifetime([p, q]) {}
        }

        @Test("a sticky event's object lives until it is replaced or cleared, and is replayed")
        func stickyObject() {
            let bus = newBus()
            let first = ObjectCounter(), second = ObjectCounter(), third = ObjectCounter()
            let listener = Probe("listener")
            mustSubscribe(bus, "Obj", listener)
            #expect(dispatch(bus, "Obj", object: first.pointer, release: objectRelease, flags: STICKY) == 1)
            #expect(first.releases == 0, "kept")
            let replayedObject = LockedValue<UnsafeMutableRawPointer?>(nil)
            let r = Probe("r")
            r.action = { ev in replayedObject.value = _qtbus_event_object(ev) }
            mustSubscribe(bus, "Obj", r, flags: REPLAY)
            #expect(replayedObject.value == first.pointer)
            #expect(first.releases == 0)
            #expect(dispatch(bus, "Obj", object: second.pointer, release: objectRelease, flags: STICKY) == 2)
            #expect(first.releases == 1, "replaced")
            #expect(second.releases == 0)
            #expect(stickyClear(bus, "Obj") == 1)
            #expect(second.releases == 1, "cleared")
            #expect(
                dispatch(
                    bus, "Obj", subtype: "s", object: third.pointer, release: objectRelease,
                    flags: STICKY) == 2)
            #expect(third.releases == 0)
            // Kept although nobody received it (it went to QTNoSubscriberEvent meanwhile).
            let unheard = ObjectCounter()
            #expect(dispatch(bus, "Unheard", object: unheard.pointer, release: objectRelease, flags: STICKY) == 0)
            #expect(unheard.releases == 0, "kept for later REPLAY subscribers")
            #expect(stickyClear(bus, "Unheard") == 1)
            #expect(unheard.releases == 1)
            #expect(_qtbus_bus_destroy(bus) == OK)
            #expect(third.releases == 1, "dropped with its bus")
            #expect([first, second, third].map(\.releases) == [1, 1, 1])
            withExtendedLifetime([listener, r, first, second, third] as [AnyObject]) {}
        }

        @Test("REPLAY + ONCE: exactly one event, the oldest kept, then disposed")
        func replayOnce() {
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            dispatch(bus, "RO", subtype: "x", data: "1", flags: STICKY)
            dispatch(bus, "RO", subtype: "y", data: "2", flags: STICKY)
            let p = Probe("p")
            let t = mustSubscribe(bus, "RO", p, flags: REPLAY | ONCE)
            #expect(p.log.values == ["p:1"])
            #expect(_qtbus_token_is_active(t) == 0)
            #expect(p.releases == 1)
            #expect(dispatch(bus, "RO", data: "3") == 0)
            #expect(p.calls == 1)
            withExtendedLifetime(p) {}
        }

        @Test("backlog gate, same thread: a live event dispatched from a replay handler is nested, depth-first")
        func backlogSameThread() {
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            let log = Recorder<String>()
            dispatch(bus, "Gate", subtype: "s1", data: "r1", flags: STICKY)
            dispatch(bus, "Gate", subtype: "s2", data: "r2", flags: STICKY)
            let w = Probe("W", log), r = Probe("R", log)
            mustSubscribe(bus, "Gate", w)
            let nested = LockedValue<[Int32]>([])
            r.action = { ev in
                if eventData(ev) == "r1" { nested.value.append(dispatch(bus, "Gate", data: "live")) }
            }
            mustSubscribe(bus, "Gate", r, flags: REPLAY)
            #expect(nested.value == [2], "W and R both ran")
            #expect(
                log.values == ["R:r1", "W:live", "R:live", "R:r2"],
                "nested in the replay's first delivery, as in any dispatch; each once")
            #expect(dispatch(bus, "Gate", data: "after") == 2, "gate open: delivered directly")
            #expect(r.log.values.filter { $0.hasPrefix("R:") } == ["R:r1", "R:live", "R:r2", "R:after"])
            withExtendedLifetime([w, r]) {}
        }

        @Test("backlog gate, two threads: a live dispatch during a replay does not block and is delivered after it")
        func backlogCrossThread() {
            settle()
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            dispatch(bus, "XGate", data: "r1", flags: STICKY)
            dispatch(bus, "XGate", subtype: "k", data: "r2", flags: STICKY)
            let entered = OneShotFlag(), go = OneShotFlag(), timedOut = LockedValue(false)
            let r = Probe("R"), w = Probe("W")
            r.action = { ev in
                guard eventData(ev) == "r1" else { return }
                entered.set()
                if !go.wait(10) { timedOut.value = true }
            }
            mustSubscribe(bus, "XGate", w)
            let status = LockedValue<Int32>(99)
            let a = TestThread { status.value = trySubscribe(bus, "XGate", r, flags: REPLAY).status }
            #expect(entered.wait(), "A is replaying r1")
            let liveResult = LockedValue<Int32>(99)
            let b = TestThread { liveResult.value = dispatch(bus, "XGate", data: "live") }
            #expect(b.join(5), "the live dispatch does not wait for the replay")
            #expect(liveResult.value == 2)
            #expect(w.log.values == ["W:live"])
            #expect(r.log.values == ["R:r1"], "R does not receive the live event during its replay")
            go.set()
            #expect(a.join())
            #expect(!timedOut.value)
            #expect(status.value == OK)
            #expect(r.log.values == ["R:r1", "R:r2", "R:live"])
            withExtendedLifetime([r, w]) {}
        }

        @Test("sticky dispatch vs REPLAY subscribe to a new subtype, interleaved: the event arrives exactly once")
        func stickyVersusNewSubtypeReplay() throws {
            // Forced interleaving (no sleeps to guess with): Y and X share one CPU and Y is
            // SCHED_IDLE.  X holds the registry lock; Y starts a sticky dispatch of (T, sN),
            // looks the type up and blocks on the lock in keepSticky (seen as state 'S' in
            // /proc, Y never sleeps otherwise).  X lets go and at once subscribes REPLAY to
            // sN, a subtype that had no entry when Y looked: Y, runnable again, cannot
            // preempt X, so X's subscribe takes the lock first.  Y then keeps the event
            // and delivers it.  The subscription existed before the event was kept, so it
            // is not replayed: the live delivery must reach it.
            guard let cpu = firstAllowedCPU() else {
                Issue.record("sched_getaffinity unavailable")
                return
            }
            settle()
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            mustSubscribe(bus, "Race", Probe("whole"))  // the type exists, subtype sN does not
            for round in 0..<16 {
                let probe = Probe("r\(round)")
                let tid = LockedValue<Int32>(0)
                let ready = OneShotFlag(), go = OneShotFlag(), yBlocked = LockedValue(false),
                    setup = LockedValue<[Bool]>([])
                let y = TestThread {
                    setup.value.append(pinToCPU(cpu))
                    setup.value.append(becomeIdleClass())
                    _ = dispatch(bus, "Warm")  // this thread's reclamation record exists from now on
                    tid.value = currentTID()
                    ready.set()
                    while !go.isSet { sched_yield() }
                    _ = dispatch(bus, "Race", subtype: "s\(round)", data: "\(round)", flags: STICKY)
                }
                #expect(ready.wait())
                let x = TestThread {
                    setup.value.append(pinToCPU(cpu))
                    withRegistry { _, _ in
                        go.set()
                        yBlocked.value = waitUntil(5) { threadState(tid.value) == "S" }
                    }
                    _ = trySubscribe(bus, "Race", probe, subtypes: ["s\(round)"], flags: REPLAY)
                }
                #expect(x.join() && y.join())
                try #require(setup.value == [true, true, true], "pinning and SCHED_IDLE are available")
                try #require(yBlocked.value, "Y reached the registry lock")
                #expect(probe.log.values == ["r\(round):\(round)"], "round \(round): delivered exactly once")
            }
        }

        // MARK: Names are bytes, in the sticky store too

        @Test("sticky events are kept per byte-distinct subtype (\"é\" U+00E9 vs \"e\"+U+0301)")
        func stickySubtypesAreBytes() {
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            let first = ObjectCounter()
            let listener = Probe("live")
            mustSubscribe(bus, "Accent", listener, subtypes: ["e\u{301}"])
            // Live delivery compares names as bytes: the precomposed event does not reach
            // the decomposed subscription.
            #expect(
                dispatchBytes(
                    bus, Array("Accent".utf8), subtype: precomposedE, data: "nfc",
                    object: first.pointer, release: objectRelease, flags: STICKY) == 0)
            #expect(listener.calls == 0)
            #expect(dispatchBytes(bus, Array("Accent".utf8), subtype: decomposedE, data: "nfd", flags: STICKY) == 1)
            #expect(first.releases == 0, "a different subtype does not replace the kept event")
            let whole = Probe("whole")
            mustSubscribe(bus, "Accent", whole, flags: REPLAY)
            #expect(whole.log.values == ["whole:nfc", "whole:nfd"], "both subtypes were kept")
            #expect(
                withCBytes(Array("Accent".utf8)) { t in withCBytes(decomposedE) { _qtbus_sticky_clear(bus, t, $0) } }
                    == 1)
            #expect(first.releases == 0, "clearing the decomposed subtype keeps the precomposed one")
            #expect(
                withCBytes(Array("Accent".utf8)) { t in withCBytes(precomposedE) { _qtbus_sticky_clear(bus, t, $0) } }
                    == 1)
            #expect(first.releases == 1)
            withExtendedLifetime([listener, whole, first] as [AnyObject]) {}
        }

        @Test("REPLAY with subtypes matches kept events by bytes, like live delivery")
        func replaySubtypesAreBytes() {
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            #expect(dispatchBytes(bus, Array("Accent2".utf8), subtype: precomposedE, data: "nfc", flags: STICKY) == 0)
            let decomposed = Probe("nfd")
            #expect(
                subscribeBytes(bus, Array("Accent2".utf8), decomposed, subtypes: [decomposedE], flags: REPLAY).status
                    == OK)
            #expect(decomposed.log.values == [], "the kept event's subtype is a different name")
            #expect(dispatchBytes(bus, Array("Accent2".utf8), subtype: precomposedE, data: "live") == 0)
            #expect(!decomposed.log.values.contains("nfd:live"), "live delivery: a different name, not delivered")
            #expect(
                withCBytes(Array("Accent2".utf8)) { t in withCBytes(decomposedE) { _qtbus_sticky_clear(bus, t, $0) } }
                    == 0,
                "nothing is kept under the decomposed name")
            withExtendedLifetime(decomposed) {}
        }
    }
}
