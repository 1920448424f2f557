// SPDX-License-Identifier: MIT
// cxx_track: qtbus::track(owner, f) (qtbus.hpp's RULES): the callable runs only while
// its owner lives, with the owner locked for the call; once the owner is gone it never
// runs again and its subscription is disposed no later than the next dispatch that
// reaches it (its callable destroyed then, lifetime rule 1); an owner gone before the
// subscribe ends the subscription at once; the end is reached whichever comes first,
// the subscribe returning or the callable running (a replay inside the subscribe);
// several owners; threads dispatching while the owner goes.
#include "cxx_util.hpp"

#include <memory>
#include <string>
#include <thread>
#include <vector>

struct owner_t {
    std::atomic<bool> *destroyed;
    explicit owner_t(std::atomic<bool> *d) : destroyed(d) {}
    ~owner_t() { *destroyed = true; }
};

static void plain_subscription_ends_with_its_owner()
{
    qtbus::bus bus;
    std::atomic<bool> destroyed{false};
    auto owner = std::make_shared<owner_t>(&destroyed);
    int calls = 0;
    const int live = counted::live.load();
    // A handler taking the event; the weak_ptr overload.
    qtbus::subscription s =
        bus.subscribe("Tick", qtbus::track(std::weak_ptr<owner_t>(owner), [&, c = counted()](const qtbus::event &e) {
                          CHECK_EQ(e.type(), std::string_view("Tick"));
                          calls++;
                      }));
    CHECK_EQ(counted::live.load(), live + 1);
    CHECK_EQ(bus.dispatch("Tick"), 1);
    CHECK_EQ(calls, 1);
    owner.reset();
    CHECK(destroyed.load());
    CHECK(s.active());                 // nothing has reached it yet
    CHECK_EQ(bus.dispatch("Tick"), 1); // reaches it: not called, disposed
    CHECK_EQ(calls, 1);
    CHECK(!s.active());
    CHECK_EQ(bus.subscriber_count("Tick"), 0);
    CHECK_EQ(counted::live.load(), live); // its callable destroyed (rule 1)
    CHECK_EQ(bus.dispatch("Tick"), 0);
    s.dispose(); // ended already: nothing to do
}

static void the_owner_is_locked_while_the_slot_runs()
{
    qtbus::bus bus;
    qtbus::queue q("track");
    std::atomic<bool> destroyed{false}, inside{false}, go{false}, destroyed_inside{true};
    auto owner = std::make_shared<owner_t>(&destroyed);
    qtbus::options on;
    on.on = &q;
    qtbus::signal<void(int32_t)> sig(bus, "Locked");
    qtbus::subscription s = sig.connect(on, qtbus::track(owner, [&](int32_t) {
                                            inside = true;
                                            while (!go.load())
                                                std::this_thread::sleep_for(std::chrono::milliseconds(1));
                                            destroyed_inside = destroyed.load();
                                        }));
    CHECK_EQ(sig(1), 1);
    wait_until([&] { return inside.load(); });
    owner.reset(); // the last shared_ptr but the slot's lock
    CHECK(!destroyed.load());
    go = true;
    wait_until([&] { return destroyed.load(); }); // when the slot let go, on the queue
    CHECK(!destroyed_inside.load());
    CHECK(bus.wait_idle(std::chrono::milliseconds(10000)));
    CHECK(s.active());
    CHECK_EQ(sig(2), 1); // queued, then found gone on the queue
    CHECK(bus.wait_idle(std::chrono::milliseconds(10000)));
    CHECK(!s.active());
}

static void an_owner_gone_before_the_subscribe()
{
    qtbus::bus bus;
    std::atomic<bool> destroyed{false};
    auto owner = std::make_shared<owner_t>(&destroyed);
    auto slot = qtbus::track(owner, [] { std::_Exit(3); });
    owner.reset();
    qtbus::subscription s = bus.subscribe("Tick", std::move(slot));
    CHECK(!s.active()); // subscribed and ended at once
    CHECK_EQ(bus.dispatch("Tick"), 0);
    qtbus::bag bag;
    bag += std::move(s); // a subscription that has ended: accepted
}

static void ended_inside_the_subscribe()
{
    // A REPLAY subscription gets the kept events inside the subscribe, before its token
    // is known: the first call lets the owner go, the second finds it gone; the
    // subscribe, seeing that, disposes the token it got.
    qtbus::bus bus;
    std::atomic<bool> destroyed{false};
    auto owner = std::make_shared<owner_t>(&destroyed);
    std::shared_ptr<owner_t> *holder = &owner;
    for (const char *sub : {"a", "b", "c"}) {
        qtbus_event_desc d{};
        d.type = "Kept";
        d.subtype = sub;
        d.flags = QTBUS_EVENT_STICKY;
        CHECK_EQ(bus.dispatch(d), 0);
    }
    int calls = 0;
    qtbus::options replay;
    replay.replay = true;
    qtbus::subscription s = bus.subscribe("Kept", replay, qtbus::track(std::weak_ptr<owner_t>(owner), [&] {
                                              calls++;
                                              holder->reset();
                                          }));
    CHECK_EQ(calls, 1);
    CHECK(destroyed.load());
    CHECK(!s.active());
    CHECK_EQ(bus.subscriber_count("Kept"), 0);
}

static void several_owners()
{
    // A tracked callable given to track() again: either owner going ends it.
    qtbus::bus bus;
    std::atomic<bool> d1{false}, d2{false};
    for (int which = 0; which < 2; which++) {
        auto first = std::make_shared<owner_t>(&d1);
        auto second = std::make_shared<owner_t>(&d2);
        int calls = 0;
        qtbus::signal<void(int32_t, std::string_view)> sig(bus, "Two");
        qtbus::subscription s =
            sig.connect(qtbus::track(first, qtbus::track(second, [&](int32_t n, std::string_view) { calls += n; })));
        CHECK_EQ(sig(2, "x"), 1);
        CHECK_EQ(calls, 2);
        (which == 0 ? first : second).reset();
        CHECK_EQ(sig(5, "y"), 1);
        CHECK_EQ(calls, 2);
        CHECK(!s.active());
    }
}

static void threads_dispatch_while_the_owner_goes()
{
    for (int round = 0; round < 20; round++) {
        qtbus::bus bus;
        std::atomic<bool> destroyed{false}, stop{false};
        auto owner = std::make_shared<owner_t>(&destroyed);
        std::atomic<int> calls{0}, after{0};
        const int live = counted::live.load();
        qtbus::signal<void(uint64_t)> sig(bus, "Race");
        qtbus::subscription s = sig.connect(qtbus::track(owner, [&, c = counted()](uint64_t) {
            // The owner is locked: never destroyed while a call runs.
            if (destroyed.load()) after++;
            calls++;
        }));
        std::vector<std::thread> threads;
        for (int t = 0; t < 3; t++) {
            threads.emplace_back([&] {
                while (!stop.load())
                    sig(1);
            });
        }
        wait_until([&] { return calls.load() > 100; });
        owner.reset();
        stop = true;
        for (std::thread &t : threads)
            t.join();
        CHECK_EQ(after.load(), 0);
        const int before = calls.load();
        sig(1); // reaches it, if none of the threads' dispatches did: disposed either way
        CHECK_EQ(calls.load(), before);
        CHECK(!s.active());
        CHECK_EQ(counted::live.load(), live);
    }
}

int main()
{
    plain_subscription_ends_with_its_owner();
    the_owner_is_locked_while_the_slot_runs();
    an_owner_gone_before_the_subscribe();
    ended_inside_the_subscribe();
    several_owners();
    threads_dispatch_while_the_owner_goes();
    std::printf("cxx_track: ok\n");
    return 0;
}
