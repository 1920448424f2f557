// SPDX-License-Identifier: MIT
// Owned subscriptions (Owners.swift, the engine side of Swift's freeWith), with owners
// the test kills at will: every dispatch asks each owned subscription of its type once
// (before delivering to the ones it reaches, after delivering for the rest, including
// those a stopped dispatch never reached), and a count asks under the lock with every
// pin dropped after the unlock.
import QTEventBusTestSupport
import Testing
import Glibc
import Synchronization
import CQtbusShims
@testable import QTBusEngine

/// The userdata of the owners the tests killed.
private let deadOwners = Mutex<Set<UInt>>([])
private let pins = Atomic<Int>(0)
private let unpins = Atomic<Int>(0)

private func kill(_ probe: Probe) { _ = deadOwners.withLock { $0.insert(UInt(bitPattern: probe.userdata)) } }

private let ownerAlive: @convention(c) (UnsafeMutableRawPointer?) -> Bool = { userdata in
    !deadOwners.withLock { $0.contains(UInt(bitPattern: userdata)) }
}
private let ownerPin: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { userdata in
    guard ownerAlive(userdata) else { return nil }
    pins.add(1, ordering: .sequentiallyConsistent)
    return userdata
}
private let ownerUnpin: @convention(c) (UnsafeMutableRawPointer?) -> Void = { _ in
    unpins.add(1, ordering: .sequentiallyConsistent)
}

@discardableResult
private func subscribeOwned(
    _ bus: OpaquePointer, _ type: String, _ probe: Probe, subtypes: [String] = [],
    priority: Int32 = 0
) -> qtbus_token {
    var token = qtbus_token(id: 0)
    let status = withCStringArray(subtypes.map { Array($0.utf8) }) { names, count in
        var options = qtbus_sub_options()
        options.subtypes = names
        options.subtype_count = count
        options.priority = priority
        return _qtEngineSubscribeOwned(
            bus, type, &options, probeHandler, probe.userdata, probeRelease,
            alive: ownerAlive, pin: ownerPin, unpin: ownerUnpin, &token)
    }
    #expect(status == OK)
    return token
}

extension Engine {
    @Suite("Owned subscriptions")
    struct OwnersTests {

        @Test("a dispatch that reaches a gone owner's subscription neither calls nor counts it")
        func reachedAndGone() {
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            let owned = Probe("owned"), plain = Probe("plain")
            subscribeOwned(bus, "Owned", owned)
            mustSubscribe(bus, "Owned", plain)
            #expect(dispatch(bus, "Owned") == 2)
            kill(owned)
            #expect(dispatch(bus, "Owned") == 1)
            #expect(owned.calls == 1 && plain.calls == 2)
            #expect(owned.releases == 1, "released before the dispatch returned")
        }

        @Test("an owner a handler lets go in the same dispatch gets no later delivery")
        func goneDuringTheDispatch() {
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            let killer = Probe("killer"), owned = Probe("owned")
            killer.action = { _ in kill(owned) }
            mustSubscribe(bus, "Owned", killer, priority: 10)
            subscribeOwned(bus, "Owned", owned)
            #expect(dispatch(bus, "Owned") == 1)
            #expect(owned.calls == 0 && owned.releases == 1)
        }

        @Test("a dispatch of another subtype, and a stopped dispatch, end the subscriptions they did not reach")
        func notReached() {
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            let alice = Probe("alice"), late = Probe("late"), stopper = Probe("stopper")
            subscribeOwned(bus, "Owned", alice, subtypes: ["alice"])
            kill(alice)
            #expect(dispatch(bus, "Owned", subtype: "bob") == 0)
            #expect(alice.calls == 0 && alice.releases == 1)

            stopper.action = { event in _ = _qtbus_event_stop(event) }
            mustSubscribe(bus, "Owned", stopper, priority: 10)
            subscribeOwned(bus, "Owned", late)
            kill(late)
            #expect(dispatch(bus, "Owned") == 1)
            #expect(late.calls == 0 && late.releases == 1, "asked after the stopped dispatch")
        }

        @Test("a count disposes a gone owner's subscription and drops every pin after the unlock")
        func counted() {
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            let live = Probe("live"), gone = Probe("gone")
            subscribeOwned(bus, "Owned", live, subtypes: ["a"])
            subscribeOwned(bus, "Owned", gone, subtypes: ["b"])
            kill(gone)
            let (pins0, unpins0) = (
                pins.load(ordering: .sequentiallyConsistent), unpins.load(ordering: .sequentiallyConsistent)
            )
            #expect(countSubscribers(bus, "Owned") == 1)
            #expect(countSubscribers(bus, "Owned", "b") == 0)
            #expect(gone.releases == 1 && live.releases == 0)
            #expect(pins.load(ordering: .sequentiallyConsistent) - pins0 == 2, "the live one, asked by each count")
            #expect(unpins.load(ordering: .sequentiallyConsistent) - unpins0 == 2)
        }

        @Test("a replay does not deliver to a subscription whose owner is gone")
        func replay() {
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            #expect(dispatch(bus, "OwnedSticky", data: "kept", flags: STICKY) == 0)
            let owned = Probe("owned")
            kill(owned)  // gone before its subscribe returns: the replay asks
            var token = qtbus_token(id: 0)
            var options = qtbus_sub_options()
            options.flags = REPLAY
            let status = "OwnedSticky".withCString { t in
                _qtEngineSubscribeOwned(
                    bus, t, &options, probeHandler, owned.userdata, probeRelease,
                    alive: ownerAlive, pin: ownerPin, unpin: ownerUnpin, &token)
            }
            #expect(status == OK)
            #expect(owned.calls == 0)
            #expect(owned.releases == 1, "disposed by the replay, released when it ended")
        }
    }
}
