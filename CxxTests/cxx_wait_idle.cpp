// SPDX-License-Identifier: MIT
// cxx_wait_idle: bus_ref::wait_idle and queue::stats -- waiting for a bus's queued
// work (true once every delivery ran, false on a timeout, qtbus::error from inside a
// handler) and a queue's counts (pending, high water, delivered, dropped).
#include "cxx_util.hpp"

#include <atomic>
#include <chrono>

using namespace std::chrono_literals;

int main()
{
    qtbus::bus bus;
    qtbus::queue q("cxx-wait");
    qtbus::options on_q;
    on_q.on = &q;

    // A gate holds the queue: deliveries wait, a short wait times out.
    gate g;
    qtbus::subscription held = bus.subscribe("Gate", on_q, g.handler());
    std::atomic<int> calls{0};
    qtbus::subscription counted_sub = bus.subscribe("Work", on_q, [&] { calls++; });
    g.hold(bus);
    for (int i = 0; i < 25; i++)
        CHECK_EQ(bus.dispatch("Work"), 1);

    qtbus_queue_stats s = q.stats();
    CHECK_EQ(s.pending, 25u);
    CHECK_EQ(s.high_water, 25u);
    CHECK_EQ(s.delivered, 1u); // the gate's call, running
    CHECK_EQ(s.dropped, 0u);
    CHECK(!bus.wait_idle(0ms));
    CHECK(!bus.wait_idle(10ms));
    CHECK_EQ(calls.load(), 0);

    g.open();
    CHECK(bus.wait_idle(-1ms));
    CHECK_EQ(calls.load(), 25);
    s = q.stats();
    CHECK_EQ(s.pending, 0u);
    CHECK_EQ(s.high_water, 25u);
    CHECK_EQ(s.delivered, 26u);

    // From inside a handler: qtbus::error with QTBUS_EINVAL.
    std::atomic<int> refused{0};
    qtbus::subscription inside = bus.subscribe("Inside", [&] {
        try {
            (void)bus.wait_idle(1000ms);
        } catch (const qtbus::error &e) {
            if (e.status() == QTBUS_EINVAL) refused++;
        }
    });
    CHECK_EQ(bus.dispatch("Inside"), 1);
    CHECK_EQ(refused.load(), 1);

    // The main queue's counts; on the main thread the wait runs its work.
    qtbus::options on_main;
    on_main.on = &qtbus::queue::main();
    std::atomic<int> main_calls{0};
    qtbus::subscription m = bus.subscribe("Main", on_main, [&] { main_calls++; });
    const uint64_t before = qtbus::queue::main().stats().delivered;
    CHECK_EQ(bus.dispatch("Main"), 1);
    CHECK_EQ(qtbus::queue::main().stats().pending, 1u);
    CHECK(bus.wait_idle(10000ms));
    CHECK_EQ(main_calls.load(), 1);
    CHECK_EQ(qtbus::queue::main().stats().delivered, before + 1);
    std::puts("cxx_wait_idle: passed");
    return 0;
}
