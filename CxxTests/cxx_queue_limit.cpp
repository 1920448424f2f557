// SPDX-License-Identifier: MIT
// cxx_queue_limit: qtbus::limit, the bounded queue constructor and queue::set_limit --
// the rules as C has them (a dropped delivery not counted by dispatch, the counts in
// queue::stats), a bad limit thrown as qtbus::error with nothing changed, and limit{}
// making a queue unbounded again.
#include "cxx_util.hpp"

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

using namespace std::chrono_literals;

int main()
{
    qtbus::bus bus;
    qtbus::queue q("cxx-limit", qtbus::limit{2, QTBUS_OVERFLOW_DROP_OLDEST});
    qtbus::options on_q;
    on_q.on = &q;

    gate g;
    qtbus::subscription held = bus.subscribe("Gate", on_q, g.handler());
    std::vector<int> seen;
    qtbus::subscription values =
        bus.subscribe("Value", on_q, [&](const qtbus::event &e) { seen.push_back(std::stoi(std::string(e.data()))); });
    g.hold(bus);
    for (int i = 0; i < 5; i++)
        CHECK_EQ(bus.dispatch("Value", std::to_string(i)), 1);
    qtbus_queue_stats s = q.stats();
    CHECK_EQ(s.pending, 2u);
    CHECK_EQ(s.dropped, 3u);

    // Now the newest is dropped instead, and dispatch says so.
    q.set_limit(qtbus::limit{2, QTBUS_OVERFLOW_DROP_NEWEST});
    CHECK_EQ(bus.dispatch("Value", "5"), 0);
    CHECK_EQ(q.stats().dropped, 4u);

    // A bad limit throws QTBUS_EINVAL and changes nothing.
    bool threw = false;
    try {
        q.set_limit(qtbus::limit{0, QTBUS_OVERFLOW_BLOCK});
    } catch (const qtbus::error &e) {
        threw = e.status() == QTBUS_EINVAL && std::string(e.what()).find("capacity of 0") != std::string::npos;
    }
    CHECK(threw);
    CHECK_EQ(bus.dispatch("Value", "5"), 0);
    threw = false;
    try {
        qtbus::queue bad("bad", qtbus::limit{8, 9});
    } catch (const qtbus::error &e) {
        threw = e.status() == QTBUS_EINVAL;
    }
    CHECK(threw);

    g.open();
    CHECK(bus.wait_idle(-1ms));
    CHECK(seen == (std::vector<int>{3, 4}));

    // Unbounded again.
    q.set_limit(qtbus::limit{});
    g.hold(bus);
    for (int i = 0; i < 100; i++)
        CHECK_EQ(bus.dispatch("Value", std::to_string(i)), 1);
    CHECK_EQ(q.stats().pending, 100u);
    g.open();
    CHECK(bus.wait_idle(-1ms));

    // BLOCK with a timeout: the dispatch waits, then drops.
    q.set_limit(qtbus::limit{1, QTBUS_OVERFLOW_BLOCK, 20ms});
    g.hold(bus);
    CHECK_EQ(bus.dispatch("Value", "5"), 1);
    auto start = std::chrono::steady_clock::now();
    CHECK_EQ(bus.dispatch("Value", "5"), 0);
    CHECK(std::chrono::steady_clock::now() - start >= 19ms);
    g.open();
    CHECK(bus.wait_idle(-1ms));
    std::puts("cxx_queue_limit: passed");
    return 0;
}
