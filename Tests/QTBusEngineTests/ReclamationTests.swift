// SPDX-License-Identifier: MIT
// Epoch-based reclamation (Reclamation.swift) as lifetime rule 1 states it:
//   release runs before the disposing call returns when no dispatch is in progress;
//   otherwise once the dispatches in progress at that moment have returned, on one of
//   their threads -- and the disposer never waits.
import Testing
import Glibc
import CQtbusShims
import QTEventBusTestSupport
@testable import QTBusEngine

/// A handler action that announces it is running, then blocks until released.
private func blocking(entered: OneShotFlag, go: OneShotFlag, timedOut: LockedValue<Bool>) -> (OpaquePointer?) -> Void {
    { _ in
        entered.set()
        if !go.wait(10) { timedOut.value = true }
    }
}

extension Engine {
    @Suite("Reclamation")
    struct ReclamationTests {

        @Test("no dispatch in progress: token, bag and bus disposal release before returning")
        func immediateRelease() {
            settle()
            let bus = newBus()
            let probes = (0..<6).map { Probe("p\($0)") }
            let me = pthread_self()

            let t0 = mustSubscribe(bus, "Now", probes[0])
            #expect(_qtbus_token_dispose(t0) == OK)
            #expect(probes[0].releases == 1, "released before qtbus_token_dispose returned")
            #expect(pthread_equal(probes[0].releaseThread, me) != 0, "on the disposing thread")

            var bag = qtbus_bag(id: 0)
            #expect(_qtbus_bag_create(&bag) == OK)
            for i in 1...3 { mustSubscribe(bus, "Now", probes[i], subtypes: ["s\(i)"], bag: bag) }
            #expect(_qtbus_bag_dispose(bag) == OK)
            #expect(probes[1...3].map(\.releases) == [1, 1, 1], "released before qtbus_bag_dispose returned")

            mustSubscribe(bus, "Now", probes[4])
            mustSubscribe(bus, "Other", probes[5], subtypes: ["a", "b"])
            #expect(_qtbus_bus_destroy(bus) == OK)
            #expect(
                probes[4].releases == 1 && probes[5].releases == 1,
                "released before qtbus_bus_destroy returned")
            #expect(probes.map(\.calls) == [0, 0, 0, 0, 0, 0])
            #expect(qtshim_pending_load() == 0, "nothing left waiting for a grace period")
            withExtendedLifetime(probes) {}
        }

        @Test("a handler disposing its own token: release after the handler, before qtbus_dispatch returns")
        func selfDispose() {
            settle()
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            let log = Recorder<String>()
            let selfish = Probe("selfish", log), later = Probe("later", log)
            let token = LockedValue(qtbus_token(id: 0))
            let disposeStatus = LockedValue<Int32>(99)
            let releasesInHandler = LockedValue(-1)
            let releasesSeenByLater = LockedValue(-1)
            selfish.action = { _ in
                disposeStatus.value = _qtbus_token_dispose(token.value)
                releasesInHandler.value = selfish.releases
            }
            later.action = { _ in releasesSeenByLater.value = selfish.releases }
            token.value = mustSubscribe(bus, "Self", selfish, priority: 1)
            mustSubscribe(bus, "Self", later, priority: 0)

            #expect(dispatch(bus, "Self", data: "1") == 2)
            #expect(disposeStatus.value == OK)
            #expect(releasesInHandler.value == 0, "not while its own handler runs")
            #expect(releasesSeenByLater.value == 0, "not while the dispatch is still in progress")
            #expect(selfish.releases == 1, "before the outer qtbus_dispatch returned")
            #expect(pthread_equal(selfish.releaseThread, pthread_self()) != 0)
            #expect(_qtbus_token_is_active(token.value) == 0)
            #expect(dispatch(bus, "Self", data: "2") == 1)
            #expect(log.values == ["selfish:1", "later:1", "later:2"])
            #expect(selfish.releases == 1)
            withExtendedLifetime([selfish, later]) {}
        }

        @Test("disposed inside a nested dispatch: release waits for the outermost dispatch")
        func nestedSelfDispose() {
            settle()
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            let outer = Probe("outer"), inner = Probe("inner")
            let innerToken = LockedValue(qtbus_token(id: 0))
            let afterInnerDispatch = LockedValue(-1)
            inner.action = { _ in #expect(_qtbus_token_dispose(innerToken.value) == OK) }
            outer.action = { _ in
                #expect(dispatch(bus, "Inner") == 1)
                afterInnerDispatch.value = inner.releases
            }
            mustSubscribe(bus, "Outer", outer)
            innerToken.value = mustSubscribe(bus, "Inner", inner)
            #expect(dispatch(bus, "Outer") == 1)
            #expect(
                afterInnerDispatch.value == 0,
                "the outer dispatch was in progress when the token was disposed")
            #expect(inner.releases == 1)
            #expect(inner.calls == 1)
            withExtendedLifetime([outer, inner]) {}
        }

        @Test("thread A blocked in a handler, thread B disposes: B does not wait, release runs when A returns, on A")
        func crossThreadDispose() {
            settle()
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            let entered = OneShotFlag(), go = OneShotFlag(), timedOut = LockedValue(false)
            let blocker = Probe("blocker"), victim = Probe("victim")
            blocker.action = blocking(entered: entered, go: go, timedOut: timedOut)
            let blockerToken = mustSubscribe(bus, "Cross", blocker, priority: 10)
            let victimToken = mustSubscribe(bus, "Cross", victim, priority: 0)

            let aResult = LockedValue<Int32>(99), aSawVictimReleases = LockedValue(-1),
                aSawBlockerReleases = LockedValue(-1)
            let a = TestThread {
                aResult.value = dispatch(bus, "Cross")
                aSawVictimReleases.value = victim.releases
                aSawBlockerReleases.value = blocker.releases
            }
            #expect(entered.wait(), "A reached the blocking handler")

            let bStatus = LockedValue<[Int32]>([]), bSawReleases = LockedValue<[Int]>([])
            let b = TestThread {
                // The victim has not run yet; the blocker is running right now on A.
                bStatus.value = [_qtbus_token_dispose(victimToken), _qtbus_token_dispose(blockerToken)]
                bSawReleases.value = [victim.releases, blocker.releases]
            }
            #expect(b.join(5), "B's disposes returned while A was still blocked (dispose never waits)")
            #expect(!a.finished.isSet, "A is still inside its dispatch")
            #expect(bStatus.value == [OK, OK])
            #expect(bSawReleases.value == [0, 0], "release must not run while A's dispatch is in progress")
            #expect(victim.releases == 0 && blocker.releases == 0)
            #expect(_qtbus_token_is_active(victimToken) == 0)
            #expect(_qtbus_token_is_active(blockerToken) == 0)

            go.set()
            #expect(a.join())
            #expect(!timedOut.value)
            #expect(aResult.value == 1, "only the blocker ran")
            #expect(victim.calls == 0, "rule 2: a disposed handler is never started again")
            #expect(victim.releases == 1 && blocker.releases == 1)
            #expect(
                aSawVictimReleases.value == 1 && aSawBlockerReleases.value == 1,
                "released before A's qtbus_dispatch returned")
            #expect(pthread_equal(victim.releaseThread, a.id) != 0, "released on A's thread")
            #expect(pthread_equal(blocker.releaseThread, a.id) != 0, "released on A's thread")
            withExtendedLifetime([blocker, victim]) {}
        }

        @Test("two dispatches in progress at dispose time: release runs when the last of them returns")
        func lastDispatcherReleases() {
            settle()
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            let enteredA = OneShotFlag(), goA = OneShotFlag(), enteredC = OneShotFlag(), goC = OneShotFlag(),
                timedOut = LockedValue(false)
            let blockA = Probe("A"), blockC = Probe("C"), victim = Probe("victim")
            blockA.action = blocking(entered: enteredA, go: goA, timedOut: timedOut)
            blockC.action = blocking(entered: enteredC, go: goC, timedOut: timedOut)
            mustSubscribe(bus, "BlockA", blockA)
            mustSubscribe(bus, "BlockC", blockC)
            let victimToken = mustSubscribe(bus, "Victim", victim)

            let a = TestThread { _ = dispatch(bus, "BlockA") }
            let c = TestThread { _ = dispatch(bus, "BlockC") }
            #expect(enteredA.wait() && enteredC.wait())
            #expect(_qtbus_token_dispose(victimToken) == OK)
            #expect(victim.releases == 0)

            goA.set()
            #expect(a.join())
            #expect(victim.releases == 0, "C's dispatch, in progress at dispose time, has not returned")
            goC.set()
            #expect(c.join())
            #expect(!timedOut.value)
            #expect(victim.releases == 1)
            #expect(pthread_equal(victim.releaseThread, c.id) != 0, "released on the last dispatcher's thread")
            withExtendedLifetime([blockA, blockC, victim]) {}
        }

        @Test("a dispatch that starts after the dispose does not hold the release back")
        func laterDispatchDoesNotDelay() {
            settle()
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            let enteredA = OneShotFlag(), goA = OneShotFlag(), enteredD = OneShotFlag(), goD = OneShotFlag(),
                timedOut = LockedValue(false)
            let blockA = Probe("A"), blockD = Probe("D"), victim = Probe("victim")
            blockA.action = blocking(entered: enteredA, go: goA, timedOut: timedOut)
            blockD.action = blocking(entered: enteredD, go: goD, timedOut: timedOut)
            mustSubscribe(bus, "BlockA", blockA)
            mustSubscribe(bus, "BlockD", blockD)
            let victimToken = mustSubscribe(bus, "Victim", victim)

            let a = TestThread { _ = dispatch(bus, "BlockA") }
            #expect(enteredA.wait())
            #expect(_qtbus_token_dispose(victimToken) == OK)
            let d = TestThread { _ = dispatch(bus, "BlockD") }
            #expect(enteredD.wait())
            #expect(victim.releases == 0)

            goA.set()
            #expect(a.join())
            #expect(victim.releases == 1, "only A was in progress at dispose time; D started later")
            #expect(pthread_equal(victim.releaseThread, a.id) != 0)
            goD.set()
            #expect(d.join())
            #expect(!timedOut.value)
            #expect(victim.releases == 1)
            withExtendedLifetime([blockA, blockD, victim]) {}
        }

        @Test("bag disposed while another thread dispatches: deferred release, disposed handlers not started")
        func bagDuringDispatch() {
            settle()
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            let entered = OneShotFlag(), go = OneShotFlag(), timedOut = LockedValue(false)
            let blocker = Probe("blocker")
            blocker.action = blocking(entered: entered, go: go, timedOut: timedOut)
            var bag = qtbus_bag(id: 0)
            #expect(_qtbus_bag_create(&bag) == OK)
            mustSubscribe(bus, "Bagged", blocker, priority: 10)
            let bagged = (0..<4).map { Probe("b\($0)") }
            for (i, p) in bagged.enumerated() {
                mustSubscribe(bus, "Bagged", p, subtypes: i % 2 == 0 ? [] : ["s"], priority: Int32(i), bag: bag)
            }
            let result = LockedValue<Int32>(99)
            let a = TestThread { result.value = dispatch(bus, "Bagged", subtype: "s") }
            #expect(entered.wait())
            #expect(_qtbus_bag_dispose(bag) == OK, "the disposer does not wait for A")
            #expect(bagged.map(\.releases) == [0, 0, 0, 0])
            #expect(countSubscribers(bus, "Bagged", "s") == 1)
            go.set()
            #expect(a.join())
            #expect(!timedOut.value)
            #expect(result.value == 1)
            #expect(bagged.map(\.calls) == [0, 0, 0, 0])
            #expect(bagged.map(\.releases) == [1, 1, 1, 1])
            #expect(_qtbus_bag_dispose(bag) == ESTALE)
            withExtendedLifetime(bagged + [blocker]) {}
        }

        @Test("lists and tables rewritten under a blocked reader: it walks on safely and sees only what it may")
        func churnUnderReader() {
            settle()
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            let entered = OneShotFlag(), go = OneShotFlag(), timedOut = LockedValue(false)
            let blocker = Probe("blocker")
            blocker.action = blocking(entered: entered, go: go, timedOut: timedOut)
            let blockerToken = mustSubscribe(bus, "Walk", blocker, subtypes: ["s"], priority: 10)
            let victims = (0..<10).map { Probe("v\($0)") }
            let victimTokens = victims.enumerated().map { i, p in
                mustSubscribe(bus, "Walk", p, subtypes: i < 5 ? ["s"] : [], priority: Int32(i % 3))
            }
            let newcomers = (0..<200).map { Probe("n\($0)") }

            let result = LockedValue<Int32>(99)
            let a = TestThread { result.value = dispatch(bus, "Walk", subtype: "s") }
            #expect(entered.wait())
            // Unlink every node A could walk to, retire the subtype entry "s", and grow the
            // type's subtype table (the old table is retired) and the bus's type table.
            for t in victimTokens { #expect(_qtbus_token_dispose(t) == OK) }
            #expect(_qtbus_token_dispose(blockerToken) == OK)
            for (i, p) in newcomers.enumerated() {
                mustSubscribe(bus, "Walk", p, subtypes: i % 2 == 0 ? ["s", "n\(i)"] : [], priority: 5)
                mustSubscribe(bus, "Walk\(i)", p)
            }
            #expect(victims.allSatisfy { $0.releases == 0 })
            go.set()
            #expect(a.join())
            #expect(!timedOut.value)
            #expect(result.value == 1)
            #expect(victims.allSatisfy { $0.calls == 0 }, "disposed while A was blocked: never started")
            #expect(newcomers.allSatisfy { $0.calls == 0 }, "subscribed during A's dispatch: not delivered")
            #expect(victims.allSatisfy { $0.releases == 1 })
            #expect(blocker.releases == 1)
            #expect(dispatch(bus, "Walk", subtype: "s") == 200, "the new lists are whole")
            withExtendedLifetime(victims + newcomers + [blocker]) {}
        }
    }
}
