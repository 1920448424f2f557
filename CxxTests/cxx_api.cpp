// SPDX-License-Identifier: MIT
// cxx_api: every class of qtbus.hpp as a user calls it -- buses, subscriptions with
// every option, bags, queues, dispatch overloads, requests, counts, commands, sources,
// and the errors failing calls throw.
#include "cxx_util.hpp"

#include <memory>
#include <string>
#include <vector>

static void subscribing_and_dispatching()
{
    qtbus::bus bus;
    std::vector<std::string> got;
    qtbus::subscription s = bus.subscribe("Login", [&](const qtbus::event &e) {
        got.push_back(std::string(e.type()) + "/" + std::string(e.subtype().value_or("-")) + "/" +
                      std::string(e.data()));
    });
    CHECK(s.active());
    CHECK_EQ(bus.dispatch("Login", "alice"), 1);                     // const char *
    CHECK_EQ(bus.dispatch(std::string_view("Login"), "bob"), 1);     // string_view
    CHECK_EQ(bus.dispatch(std::string("Login"), "web", "carol"), 1); // with a subtype
    qtbus_event_desc d{};
    d.type = "Login";
    CHECK_EQ(bus.dispatch(d), 1); // the C description
    CHECK_EQ(got.size(), 4u);
    CHECK_EQ(got[0], std::string("Login/-/alice"));
    CHECK_EQ(got[2], std::string("Login/web/carol"));
    CHECK_EQ(got[3], std::string("Login/-/"));
    CHECK_EQ(bus.subscriber_count("Login"), 1);
    CHECK_EQ(bus.subscriber_count("Login", "web"), 1);

    // A handler taking nothing; moving a subscription moves the ownership.
    int plain = 0;
    qtbus::subscription a = bus.subscribe("Tick", [&] { plain++; });
    qtbus::subscription b = std::move(a);
    CHECK(!a.active());
    CHECK(b.active());
    bus.dispatch("Tick");
    CHECK_EQ(plain, 1);
    b.dispose();
    CHECK(!b.active());
    CHECK_EQ(bus.dispatch("Tick"), 0);
    b.dispose(); // again: nothing

    // release() detaches: the subscription lives on after the object is gone.
    qtbus_token kept;
    {
        qtbus::subscription c = bus.subscribe("Tick", [&] { plain++; });
        kept = c.release();
    }
    CHECK_EQ(bus.dispatch("Tick"), 1);
    CHECK_EQ(qtbus_token_dispose(kept), QTBUS_OK);

    // Move-assignment disposes what was held.
    qtbus::subscription d1 = bus.subscribe("Tick", [] {});
    d1 = bus.subscribe("Tock", [] {});
    CHECK_EQ(bus.subscriber_count("Tick"), 0);
    CHECK_EQ(bus.subscriber_count("Tock"), 1);
}

static void options_and_stop()
{
    qtbus::bus bus;
    std::string order;
    qtbus::options low;
    low.priority = -1;
    qtbus::options high;
    high.priority = 5;
    qtbus::options once;
    once.once = true;
    qtbus::options only_web;
    only_web.subtypes = {"web", "app"};
    auto s1 = bus.subscribe("E", low, [&] { order += "L"; });
    auto s2 = bus.subscribe("E", high, [&](const qtbus::event &) { order += "H"; });
    auto s3 = bus.subscribe("E", once, [&] { order += "O"; });
    auto s4 = bus.subscribe("E", only_web, [&] { order += "W"; });
    bus.dispatch("E", "x");
    bus.dispatch("E", "web", "x");
    CHECK_EQ(order, std::string("HOLHWL"));
    CHECK(!s3.active());

    // stop(): later handlers of this dispatch do not run.
    auto stopper = bus.subscribe("S", high, [](const qtbus::event &e) { CHECK(e.stop()); });
    int after = 0;
    auto later = bus.subscribe("S", [&] { after++; });
    bus.dispatch("S");
    CHECK_EQ(after, 0);

    // Sticky + replay.
    qtbus_event_desc d{};
    d.type = "Config";
    d.data = "v1";
    d.size = 2;
    d.flags = QTBUS_EVENT_STICKY;
    bus.dispatch(d);
    qtbus::options replay;
    replay.replay = true;
    std::string replayed;
    auto r = bus.subscribe("Config", replay, [&](const qtbus::event &e) { replayed = std::string(e.data()); });
    CHECK_EQ(replayed, std::string("v1"));

    // On a queue: the handler runs there; the event (data, object) was copied.
    qtbus::queue q("cxx");
    qtbus::options on_q;
    on_q.on = &q;
    std::atomic<int> queued{0};
    std::atomic<bool> stopped_there{true};
    auto qs = bus.subscribe("Q", on_q, [&](const qtbus::event &e) {
        stopped_there = e.stop();
        if (e.data() == "payload") queued++;
    });
    bus.dispatch("Q", "payload");
    wait_until([&] { return queued.load() == 1; });
    CHECK(!stopped_there.load()); // a queued delivery cannot stop
}

static void bags()
{
    qtbus::bus bus;
    int calls = 0;
    {
        qtbus::bag bag;
        bag.add(bus.subscribe("B", [&] { calls++; }));
        bag += bus.subscribe("B", [&] { calls++; });
        CHECK_EQ(bus.dispatch("B"), 2);
        qtbus::bag moved = std::move(bag);
        CHECK_EQ(bus.subscriber_count("B"), 2);
    } // the bag's destructor disposes both
    CHECK_EQ(bus.subscriber_count("B"), 0);
    CHECK_EQ(calls, 2);
    // A failed add leaves the subscription with its owner.
    qtbus::bag first, second;
    qtbus::subscription s = bus.subscribe("B", [] {});
    qtbus_token t = s.c_token();
    first.add(std::move(s));
    qtbus::subscription again(t); // adopt the token (it is in `first`)
    CHECK_THROWS(QTBUS_EINVAL, second.add(std::move(again)));
    CHECK(again.active());
    again.release(); // `first` owns it
    first.dispose();
    CHECK_EQ(bus.subscriber_count("B"), 0);
    // A subscription that already ended (a once that fired) is accepted, and dropped.
    qtbus::options once;
    once.once = true;
    qtbus::subscription fired = bus.subscribe("B", once, [] {});
    bus.dispatch("B");
    CHECK(!fired.active());
    second.add(std::move(fired));
    // A disposed bag refuses, and the subscription stays with its owner.
    qtbus::subscription live = bus.subscribe("B", [] {});
    second.dispose();
    CHECK_THROWS(QTBUS_ESTALE, second.add(std::move(live)));
    CHECK(live.active());
}

static void requests()
{
    qtbus::bus bus;
    auto responder = bus.subscribe("Ping", [](const qtbus::event &e) { e.reply(std::string(e.data()) + " pong"); });
    std::vector<std::string> replies;
    bool complete = false;
    int reached = bus.request(
        "Ping", "hi", [&](const qtbus::event &r) { replies.push_back(std::string(r.data())); },
        [&] { complete = true; });
    CHECK_EQ(reached, 1);
    CHECK_EQ(replies.size(), 1u);
    CHECK_EQ(replies[0], std::string("hi pong"));
    CHECK(complete);
    // Without a completion; nobody subscribed: 0 reached.
    CHECK_EQ(bus.request("Nobody", "", [](const qtbus::event &) {}), 0);
    // Replying to an event that is not a request throws (inside the handler: routed).
    auto prev = qtbus::set_exception_handler([](std::exception_ptr p) {
        try {
            std::rethrow_exception(p);
        } catch (const qtbus::error &e) {
            CHECK_EQ(e.status(), QTBUS_EINVAL);
        }
    });
    auto bad = bus.subscribe("NotARequest", [](const qtbus::event &e) { e.reply("x"); });
    bus.dispatch("NotARequest");
    qtbus::set_exception_handler(prev);
}

// Deferred replies, event flags and type ids.
static void deferred_flags_and_type_ids()
{
    qtbus::bus bus;
    std::vector<qtbus::deferred_reply> held;
    auto later = bus.subscribe("Later", [&](const qtbus::event &e) {
        CHECK(e.is_request());
        CHECK(!e.sticky());
        held.push_back(e.defer());
    });
    std::vector<std::string> replies;
    int completions = 0;
    CHECK_EQ(bus.request(
                 "Later", "", [&](const qtbus::event &r) { replies.push_back(std::string(r.data())); },
                 [&] { completions++; }),
             1);
    CHECK_EQ(completions, 0);
    held[0].reply("one");
    CHECK_EQ(replies.size(), 1u);
    CHECK_EQ(replies[0], std::string("one"));
    held.clear(); // the destructor finishes it
    CHECK_EQ(completions, 1);
    qtbus::deferred_reply gone;
    gone.finish(); // an empty one: nothing to finish

    bool sticky_seen = false;
    auto s = bus.subscribe("Kept", [&](const qtbus::event &e) { sticky_seen = e.sticky() && !e.is_request(); });
    qtbus_event_desc d{};
    d.type = "Kept";
    d.flags = QTBUS_EVENT_STICKY;
    CHECK_EQ(bus.dispatch(d), 1);
    CHECK(sticky_seen);

    int ticks = 0;
    std::string last;
    auto t = bus.subscribe("Tick", [&](const qtbus::event &e) {
        ticks++;
        last = std::string(e.data());
        CHECK(e.type() == "Tick");
    });
    qtbus_type_id tick = bus.type_id("Tick");
    CHECK_EQ(bus.type_id("Tick").id, tick.id);
    for (int i = 0; i < 3; i++)
        CHECK_EQ(bus.dispatch(tick, "t"), 1);
    CHECK_EQ(ticks, 3);
    CHECK_EQ(last, std::string("t"));
    CHECK_THROWS(QTBUS_EINVAL, bus.dispatch(qtbus_type_id{0}));
    CHECK_THROWS(QTBUS_EINVAL, bus.type_id(""));
}

static void commands_and_sources()
{
    qtbus::bus bus;
    std::vector<std::string> values;
    auto watch = bus.subscribe(QTBUS_COMMAND_VALUE_TYPE,
                               [&](const qtbus::event &e) { values.push_back(std::string(e.data())); });
    std::string input_seen;
    qtbus::command save = bus.command("save", [&](qtbus::execution x, const qtbus::event *input) {
        if (input) input_seen = std::string(input->data());
        x.send("saved");
        x.finish();
    });
    CHECK(save.enabled());
    CHECK(save.execute());
    CHECK(save.execute("SaveInput", "doc.txt"));
    CHECK_EQ(input_seen, std::string("doc.txt"));
    CHECK_EQ(values.size(), 2u);
    save.set_enabled(false);
    CHECK(!save.enabled());
    CHECK(!save.execute()); // disabled: false, nothing run
    save.set_enabled(true);

    // An execution finished later, with an error, from another thread.
    qtbus_execution pending{0};
    qtbus::command slow = bus.command("slow", [&](qtbus::execution x) { pending = x.c_execution(); });
    CHECK(slow.execute());
    CHECK(slow.executing());
    CHECK(!slow.execute()); // busy (not concurrent)
    std::thread([&] { qtbus::execution(pending).fail(7, "disk full"); }).join();
    CHECK(!slow.executing());

    // A source: autoconnect follows the subscribers.
    int starts = 0, stops = 0;
    qtbus::source ticks = bus.source(
        "Tick",
        [&](qtbus::bus_ref b) {
            starts++;
            b.dispatch("Tick", "first");
        },
        [&] { stops++; }, true);
    std::string first;
    {
        auto s = bus.subscribe("Tick", [&](const qtbus::event &e) { first = std::string(e.data()); });
        CHECK_EQ(starts, 1);
        CHECK_EQ(first, std::string("first"));
    }
    CHECK_EQ(stops, 1);
    ticks.connect();
    ticks.disconnect();
    CHECK_EQ(starts, 2);
    CHECK_EQ(stops, 2);
    ticks.dispose();
    CHECK_THROWS(QTBUS_ESTALE, ticks.connect());
}

static void errors()
{
    qtbus::bus bus;
    CHECK_THROWS(QTBUS_EINVAL, bus.subscribe("", [] {}));
    CHECK_THROWS(QTBUS_EINVAL, bus.subscribe(std::string_view("a\0b", 3), [] {}));
    CHECK_THROWS(QTBUS_EINVAL, bus.dispatch(std::string(300, 'x')));
    CHECK_THROWS(QTBUS_EINVAL, bus.subscriber_count("\xff"));
    qtbus::options bad;
    bad.subtypes = {std::string("a\0b", 3)};
    CHECK_THROWS(QTBUS_EINVAL, bus.subscribe("E", bad, [] {}));
    try {
        bus.dispatch("");
        CHECK(false);
    } catch (const qtbus::error &e) {
        CHECK(std::string(e.what()).find("qtbus_dispatch") == 0);
    }
    // A destroyed bus's subscription only holds a stale token.
    qtbus::subscription orphan;
    {
        qtbus::bus gone;
        orphan = gone.subscribe("E", [] {});
    }
    CHECK(!orphan.active());
    orphan.dispose();
}

static void shared_bus_and_c_interop()
{
    qtbus::bus_ref shared = qtbus::shared();
    CHECK(shared.c_bus() == qtbus_shared());
    int n = 0;
    auto s = shared.subscribe("CxxShared", [&] { n++; });
    // C code dispatching on the same bus reaches the C++ handler.
    qtbus_event_desc d{};
    d.type = "CxxShared";
    CHECK_EQ(qtbus_dispatch(qtbus_shared(), &d), 1);
    CHECK_EQ(n, 1);
    // A bus made by C code, used through bus_ref.
    qtbus_bus *c_bus = qtbus_bus_create();
    {
        qtbus::bus_ref ref(c_bus);
        auto t = ref.subscribe("E", [&] { n++; });
        CHECK_EQ(ref.dispatch("E"), 1);
    }
    qtbus_bus_destroy(c_bus);
    CHECK(qtbus::queue::main().c_queue() == qtbus_queue_main());
}

int main()
{
    subscribing_and_dispatching();
    options_and_stop();
    bags();
    requests();
    deferred_flags_and_type_ids();
    commands_and_sources();
    errors();
    shared_bus_and_c_interop();
    std::puts("cxx_api: passed");
    return 0;
}
