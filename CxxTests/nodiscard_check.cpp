// SPDX-License-Identifier: MIT
// nodiscard_check: dropping an owning handle must not compile under -Werror.
//
// Not a program to run: CMakeLists.txt compiles this file once as is (the control,
// which keeps every handle and must compile cleanly) and once per case with
// -DQTBUS_DROP_<CASE>, which turns that case's one line from keeping the handle into
// dropping it.  Each case must then fail, with only [[nodiscard]] diagnostics, one of
// them on the line marked `// drop: <CASE>` (compile_check.cmake checks all three).
// So a case cannot pass by failing for another reason, and the control shows the same
// code compiles when the handle is kept.
#include <qtbus.hpp>

#include <string>

// Factories of the user's own that return an owning class by value: the classes are
// [[nodiscard]] themselves, so dropping their result warns as for the header's own.
static qtbus::subscription log_ticks(qtbus::bus_ref bus)
{
    return bus.subscribe("Tick", [] {});
}
static qtbus::bag make_bag() { return qtbus::bag(); }
static qtbus::bus make_bus() { return qtbus::bus(); }
static qtbus::queue make_queue() { return qtbus::queue("nodiscard_check"); }
// Not movable, but a prvalue needs no move (C++17): a factory can still return one.
static qtbus::scoped_block quiet(const qtbus::subscription &s) { return qtbus::scoped_block(s); }

int main()
{
    qtbus::bus bus;
    auto on_tick = [](const qtbus::event &) {};
    qtbus::options once;
    once.once = true;
    auto execute = [](qtbus::execution x) { x.finish(); };
    auto start = [](qtbus::bus_ref) {};
    auto stop = [] {};

#ifdef QTBUS_DROP_SUBSCRIBE
    bus.subscribe("Tick", on_tick); // drop: SUBSCRIBE
#else
    qtbus::subscription s1 = bus.subscribe("Tick", on_tick); // drop: SUBSCRIBE
#endif
#ifdef QTBUS_DROP_SUBSCRIBE_OPTIONS
    bus.subscribe("Tick", once, on_tick); // drop: SUBSCRIBE_OPTIONS
#else
    auto s2 = bus.subscribe("Tick", once, on_tick);          // drop: SUBSCRIBE_OPTIONS
#endif
#ifdef QTBUS_DROP_SHARED_SUBSCRIBE
    qtbus::shared().subscribe("Tick", on_tick); // drop: SHARED_SUBSCRIBE
#else
    auto s3 = qtbus::shared().subscribe("Tick", on_tick);    // drop: SHARED_SUBSCRIBE
#endif
    qtbus::signal<void(int32_t)> ticked(bus, "Ticked");
#ifdef QTBUS_DROP_CONNECT
    ticked.connect([](int32_t) {}); // drop: CONNECT
#else
    qtbus::subscription s5 = ticked.connect([](int32_t) {}); // drop: CONNECT
#endif
#ifdef QTBUS_DROP_COMMAND
    bus.command("save", execute); // drop: COMMAND
#else
    qtbus::command save = bus.command("save", execute);      // drop: COMMAND
#endif
#ifdef QTBUS_DROP_EXECUTE
    save.execute(); // drop: EXECUTE
#else
    if (!save.execute()) return 1;                           // drop: EXECUTE
#endif
#ifdef QTBUS_DROP_SOURCE
    bus.source("Tick", start, stop); // drop: SOURCE
#else
    qtbus::source ticks = bus.source("Tick", start, stop);   // drop: SOURCE
#endif
    auto later = bus.subscribe("Ask", [](const qtbus::event &e) {
#ifdef QTBUS_DROP_DEFER
        e.defer(); // drop: DEFER
#else
        qtbus::deferred_reply d = e.defer();  // drop: DEFER
        d.reply("later");
#endif
    });
#ifdef QTBUS_DROP_USER_SUBSCRIPTION
    log_ticks(bus); // drop: USER_SUBSCRIPTION
#else
    auto s4 = log_ticks(bus);                                // drop: USER_SUBSCRIPTION
#endif
#ifdef QTBUS_DROP_BAG
    make_bag(); // drop: BAG
#else
    qtbus::bag bag = make_bag();                             // drop: BAG
#endif
#ifdef QTBUS_DROP_BUS
    make_bus(); // drop: BUS
#else
    qtbus::bus other = make_bus();                           // drop: BUS
#endif
#ifdef QTBUS_DROP_QUEUE
    make_queue(); // drop: QUEUE
#else
    qtbus::queue worker = make_queue();                      // drop: QUEUE
#endif
    qtbus::subscription held = bus.subscribe("Held", on_tick);
#ifdef QTBUS_DROP_SCOPED_BLOCK
    quiet(held); // drop: SCOPED_BLOCK
#else
    auto blocked = quiet(held);                              // drop: SCOPED_BLOCK
#endif

    // The ways to let go on purpose compile in every variant: into a bag, release()
    // (the subscription lives on), and a cast to void (it ends at once).
    bag += bus.subscribe("Tick", on_tick);
    bag.add(log_ticks(bus));
    bus.subscribe("Tick", on_tick).release();
    (void)bus.subscribe("Tick", on_tick);
    (void)save.execute();
    return bus.dispatch("Tick") >= 0 ? 0 : 1;
}
