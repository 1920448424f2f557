// SPDX-License-Identifier: MIT
// Lifetime rules 1-3 and the error convention: release exactly once per successful
// subscribe, never for a failed one; disposed handlers never start again (queued
// deliveries included); bags; ONCE; bus destruction.
import QTEventBusTestSupport
import Testing
import Glibc
import CQtbusShims
@testable import QTBusEngine

extension Engine {
    @Suite("Lifetime")
    struct LifetimeTests {

        @Test("release runs exactly once whichever way the subscription ends")
        func releaseExactlyOnce() {
            settle()
            let bus = newBus()
            let byToken = Probe("token"), byBag = Probe("bag"), byOnce = Probe("once"), byBus = Probe("bus")
            let multi = Probe("multi")

            let t = mustSubscribe(bus, "Life", byToken)
            #expect(_qtbus_token_dispose(t) == OK)
            #expect(_qtbus_token_dispose(t) == ESTALE)
            #expect(byToken.releases == 1)

            var bag = qtbus_bag(id: 0)
            #expect(_qtbus_bag_create(&bag) == OK)
            let tb = mustSubscribe(bus, "Life", byBag, bag: bag)
            #expect(_qtbus_bag_dispose(bag) == OK)
            #expect(_qtbus_bag_dispose(bag) == ESTALE)
            #expect(_qtbus_token_dispose(tb) == ESTALE, "bag disposal made the token stale")
            #expect(byBag.releases == 1)

            let to = mustSubscribe(bus, "Once", byOnce, flags: ONCE)
            #expect(dispatch(bus, "Once") == 1)
            #expect(byOnce.releases == 1, "ONCE fired: released before the dispatch returned")
            #expect(dispatch(bus, "Once") == 0)
            #expect(_qtbus_token_dispose(to) == ESTALE, "a fired ONCE token is stale")
            #expect(byOnce.calls == 1 && byOnce.releases == 1)

            let tbus = mustSubscribe(bus, "Life", byBus)
            mustSubscribe(bus, "Multi", multi, subtypes: ["a", "b", "c"])
            #expect(_qtbus_bus_destroy(bus) == OK)
            #expect(byBus.releases == 1)
            #expect(multi.releases == 1, "one release for a subscription in three lists")
            #expect(_qtbus_token_dispose(tbus) == ESTALE, "its bus was destroyed")
            #expect(_qtbus_token_is_active(tbus) == 0)
            #expect([byToken, byBag, byOnce, byBus, multi].map(\.releases) == [1, 1, 1, 1, 1])
            withExtendedLifetime([byToken, byBag, byOnce, byBus, multi]) {}
        }

        @Test("a failing subscribe changes nothing, sets the token to {0} and never calls release")
        func failedSubscribe() {
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            let p = Probe("p")
            var deadBag = qtbus_bag(id: 0)
            #expect(_qtbus_bag_create(&deadBag) == OK)
            #expect(_qtbus_bag_dispose(deadBag) == OK)

            var results: [(String, Int32, UInt64)] = []
            func record(_ what: String, _ r: (status: Int32, token: qtbus_token)) {
                results.append((what, r.status, r.token.id))
            }
            record("unknown flag", trySubscribe(bus, "Fail", p, flags: 1 << 9))
            record("stale bag", trySubscribe(bus, "Fail", p, bag: deadBag))
            record("forged bag", trySubscribe(bus, "Fail", p, bag: qtbus_bag(id: 0x1234_0000_0001)))
            record("bad subtype", trySubscribe(bus, "Fail", p, subtypes: ["ok", ""]))
            record("NULL bus", trySubscribe(nil, "Fail", p))
            for (what, status, id) in results {
                #expect(status == (what.contains("bag") ? ESTALE : EINVAL), "\(what)")
                #expect(id == 0, "\(what): token_out is {0}")
            }
            var token = qtbus_token(id: 5)
            #expect(_qtbus_subscribe(bus, "Fail", nil, nil, p.userdata, probeRelease, &token) == EINVAL, "NULL handler")
            #expect(token.id == 0)
            var options = qtbus_sub_options()
            options.subtype_count = 2  // subtypes NULL with a count
            #expect(_qtbus_subscribe(bus, "Fail", &options, probeHandler, p.userdata, probeRelease, &token) == EINVAL)
            #expect(token.id == 0)

            #expect(countSubscribers(bus, "Fail") == 0)
            #expect(dispatch(bus, "Fail") == 0)
            #expect(p.releases == 0 && p.calls == 0, "the caller still owns its userdata")
            // NULL options and NULL token_out are fine.
            #expect(_qtbus_subscribe(bus, "Fail", nil, probeHandler, p.userdata, probeRelease, nil) == OK)
            #expect(dispatch(bus, "Fail") == 1)
            withExtendedLifetime(p) {}
        }

        @Test("rule 2: a handler disposing later subscriptions of the same dispatch stops them from starting")
        func disposeLaterInSameDispatch() {
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            let log = Recorder<String>()
            let killer = Probe("killer", log), victim = Probe("victim", log), bagged = Probe("bagged", log)
            let survivor = Probe("survivor", log)
            var bag = qtbus_bag(id: 0)
            #expect(_qtbus_bag_create(&bag) == OK)
            let victimToken = LockedValue(qtbus_token(id: 0))
            killer.action = { _ in
                #expect(_qtbus_token_dispose(victimToken.value) == OK)
                #expect(_qtbus_bag_dispose(bag) == OK)
            }
            mustSubscribe(bus, "Kill", killer, priority: 9)
            victimToken.value = mustSubscribe(bus, "Kill", victim, subtypes: ["s"], priority: 5)
            mustSubscribe(bus, "Kill", bagged, priority: 3, bag: bag)
            mustSubscribe(bus, "Kill", survivor, priority: 1)
            #expect(dispatch(bus, "Kill", subtype: "s", data: "1") == 2)
            #expect(log.values == ["killer:1", "survivor:1"])
            #expect(victim.releases == 1 && bagged.releases == 1)
            withExtendedLifetime([killer, victim, bagged, survivor]) {}
        }

        @Test("bags: one bag per token, stale handles, tokens leave the bag when disposed")
        func bags() {
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            let p = (0..<4).map { Probe("p\($0)") }
            var bag1 = qtbus_bag(id: 0), bag2 = qtbus_bag(id: 0)
            #expect(_qtbus_bag_create(&bag1) == OK && _qtbus_bag_create(&bag2) == OK)
            #expect(bag1.id != bag2.id)
            let t0 = mustSubscribe(bus, "Bag", p[0])
            let t1 = mustSubscribe(bus, "Bag", p[1], bag: bag1)
            let t2 = mustSubscribe(bus, "Bag", p[2])
            #expect(_qtbus_bag_add(bag1, t0) == OK)
            #expect(_qtbus_bag_add(bag1, t0) == OK, "again into the same bag: nothing")
            #expect(_qtbus_bag_add(bag2, t0) == EINVAL, "a token is in at most one bag")
            #expect(_qtbus_bag_add(bag2, t1) == EINVAL)
            #expect(_qtbus_bag_add(bag2, t2) == OK)
            #expect(_qtbus_bag_add(qtbus_bag(id: 0), t2) == ESTALE)
            #expect(_qtbus_bag_add(bag1, qtbus_token(id: 0)) == ESTALE)
            // A disposed token leaves its bag by itself.
            #expect(_qtbus_token_dispose(t0) == OK)
            #expect(p[0].releases == 1)
            #expect(_qtbus_bag_add(bag1, t0) == ESTALE)
            // A subscription with no token_out lives until its bag goes.
            let r = "Bag".withCString { t in
                var options = qtbus_sub_options()
                options.bag = bag1
                return _qtbus_subscribe(bus, t, &options, probeHandler, p[3].userdata, probeRelease, nil)
            }
            #expect(r == OK)
            #expect(dispatch(bus, "Bag") == 3)
            #expect(_qtbus_bag_dispose(bag1) == OK)
            #expect(p.map(\.releases) == [1, 1, 0, 1], "t0 was not released a second time")
            #expect(_qtbus_bag_add(bag1, t2) == ESTALE)
            #expect(dispatch(bus, "Bag") == 1)
            #expect(_qtbus_bag_dispose(bag2) == OK)
            #expect(p.map(\.releases) == [1, 1, 1, 1])
            #expect(p.map(\.calls) == [0, 1, 2, 1], "t0 was disposed before the first dispatch")
            withExtendedLifetime(p) {}
        }

        @Test("bus destroy: release hooks run while it is closing and see QTBUS_ECLOSED")
        func destroyClosesTheBus() {
            settle()
            let bus = newBus()
            let p = Probe("p"), q = Probe("q")
            let seen = LockedValue<[Int32]>([])
            p.onRelease = {
                // The bus is being destroyed: every call that reaches it is ECLOSED.
                let r = trySubscribe(bus, "Closing", q)
                seen.value.append(r.status)
                seen.value.append(r.token.id == 0 ? 0 : 1)
                seen.value.append(dispatch(bus, "Closing"))
                seen.value.append(countSubscribers(bus, "Closing"))
                seen.value.append(stickyClear(bus, "Closing"))
                seen.value.append(_qtbus_bus_destroy(bus))
                let posted = "Closing".withCString { t in
                    var desc = qtbus_event_desc()
                    desc.type = t
                    return _qtbus_dispatch_on_bus_queue(bus, &desc)
                }
                seen.value.append(posted)
            }
            mustSubscribe(bus, "Closing", p)
            #expect(_qtbus_bus_destroy(bus) == OK)
            #expect(p.releases == 1)
            #expect(seen.value == [ECLOSED, 0, ECLOSED, ECLOSED, ECLOSED, ECLOSED, ECLOSED])
            #expect(q.releases == 0, "the failed subscribe's release hook was not called")
            #expect(_qtbus_bus_destroy(_qtbus_shared()) == EINVAL)
            #expect(_qtbus_bus_destroy(nil) == EINVAL)
            withExtendedLifetime([p, q]) {}
        }

        @Test("a handler destroying its own bus: later handlers skipped, releases when the dispatch returns")
        func handlerDestroysBus() {
            settle()
            let bus = newBus()
            let log = Recorder<String>()
            let destroyer = Probe("destroyer", log), after = Probe("after", log)
            let inHandler = LockedValue<[Int]>([])
            destroyer.action = { _ in
                #expect(_qtbus_bus_destroy(bus) == OK)
                inHandler.value = [destroyer.releases, after.releases]
            }
            mustSubscribe(bus, "Doom", destroyer, priority: 1)
            mustSubscribe(bus, "Doom", after, priority: 0)
            #expect(dispatch(bus, "Doom") == 1)
            #expect(log.values == ["destroyer:"])
            #expect(inHandler.value == [0, 0], "a dispatch was in progress: releases wait for it")
            #expect(destroyer.releases == 1 && after.releases == 1)
            withExtendedLifetime([destroyer, after]) {}
        }

        @Test("queued delivery: dropped when disposed before it runs; release waits for it; stop is EINVAL")
        func queuedDelivery() {
            settle()
            let bus = newBus()
            let queue = _qtbus_queue_create("qtbus.tests")!
            let entered = OneShotFlag(), go = OneShotFlag()
            let gate = Probe("gate"), victim = Probe("victim"), keeper = Probe("keeper")
            let stopResult = LockedValue<Int32>(99)
            gate.action = { _ in
                entered.set()
                go.wait(10)
            }
            keeper.action = { ev in stopResult.value = _qtbus_event_stop(ev) }
            let gateToken = mustSubscribe(bus, "Gate", gate, queue: queue)
            let victimToken = mustSubscribe(bus, "Q", victim, queue: queue)
            let keeperToken = mustSubscribe(bus, "Q", keeper, queue: queue)
            _qtbus_queue_release(queue)  // subscriptions keep the queue alive

            #expect(dispatch(bus, "Gate") == 1, "queued deliveries count")
            #expect(entered.wait())
            #expect(dispatch(bus, "Q", data: "x") == 2)
            #expect(_qtbus_token_dispose(victimToken) == OK)
            #expect(victim.releases == 0, "a delivery of it is still queued")
            go.set()
            #expect(waitUntil { keeper.calls == 1 && victim.releases == 1 })
            #expect(victim.calls == 0, "rule 2: queued deliveries included")
            #expect(pthread_equal(victim.releaseThread, pthread_self()) == 0, "released by the queue")
            #expect(stopResult.value == EINVAL, "a queued event's dispatch is over")
            #expect(keeper.log.values == ["keeper:x"], "the queued delivery got a copy of the bytes")
            #expect(_qtbus_token_dispose(gateToken) == OK)
            #expect(_qtbus_token_dispose(keeperToken) == OK)
            #expect(waitUntil { gate.releases == 1 && keeper.releases == 1 })
            #expect(_qtbus_bus_destroy(bus) == OK)
            settle()
            withExtendedLifetime([gate, victim, keeper]) {}
        }

        @Test("inside its ONCE delivery the subscription is no longer live: not active, not counted, not reached")
        func onceNotLiveDuringItsDelivery() {
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            let p = Probe("once")
            let token = LockedValue(qtbus_token(id: 0))
            let seen = LockedValue<[Int32]>([])
            p.action = { _ in
                seen.value = [
                    _qtbus_token_is_active(token.value),
                    countSubscribers(bus, "OnceLive"),
                    countSubscribers(bus, "OnceLive", "s"),
                    dispatch(bus, "OnceLive", subtype: "s"),
                    _qtbus_token_dispose(token.value),
                ]
            }
            token.value = mustSubscribe(bus, "OnceLive", p, flags: ONCE)
            #expect(countSubscribers(bus, "OnceLive") == 1)
            #expect(dispatch(bus, "OnceLive", subtype: "s") == 1)
            #expect(seen.value[0] == 0, "qtbus_token_is_active: fired, no longer live")
            #expect(seen.value[1] == 0, "qtbus_subscriber_count(type, NULL) counts live subscriptions only")
            #expect(seen.value[2] == 0, "qtbus_subscriber_count(type, subtype) counts live subscriptions only")
            #expect(seen.value[3] == 0, "a dispatch now does not reach it")
            #expect(seen.value[4] == ESTALE, "disposing a fired token is ESTALE")
            #expect(countSubscribers(bus, "OnceLive") == 0)
            #expect(p.calls == 1 && p.releases == 1)
        }

        @Test("ONCE on a queue: delivered once however many dispatches, then released")
        func onceOnQueue() {
            let bus = newBus()
            let queue = _qtbus_queue_create(nil)!
            let p = Probe("once")
            let token = mustSubscribe(bus, "OnceQ", p, flags: ONCE, queue: queue)
            #expect(dispatch(bus, "OnceQ", data: "1") == 1)
            #expect(dispatch(bus, "OnceQ", data: "2") == 0)
            #expect(_qtbus_token_is_active(token) == 0)
            #expect(waitUntil { p.releases == 1 })
            #expect(p.calls == 1)
            #expect(p.log.values == ["once:1"])
            _qtbus_queue_release(queue)
            #expect(_qtbus_bus_destroy(bus) == OK)
            settle()
            withExtendedLifetime(p) {}
        }
    }
}
