// SPDX-License-Identifier: MIT
// cxx_stress: 4 threads subscribing, disposing (by destructor, dispose(), bag, once)
// and dispatching through qtbus.hpp on one bus, with a capture in every handler:
// every capture is destroyed exactly once, and no handler runs after its capture.
#include "cxx_util.hpp"

#include <random>
#include <thread>
#include <vector>

// Lives in the handler's capture; a handler running after its destruction sees `alive` 0.
struct guard {
    counted c;
    std::shared_ptr<std::atomic<int>> alive = std::make_shared<std::atomic<int>>(1);
    guard() = default;
    guard(guard &&o) noexcept = default;
    guard(const guard &) = default;
    ~guard()
    {
        if (c.owns) alive->store(0);
    }
};

static std::atomic<long> handled{0}, violations{0};

int main()
{
    qtbus::bus bus;
    qtbus::queue q("stress");
    constexpr int threads = 4;
    constexpr int rounds = 4000;
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; t++) {
        pool.emplace_back([&, t] {
            std::mt19937 rng(1234u + static_cast<unsigned>(t));
            std::vector<qtbus::subscription> mine;
            qtbus::bag bag;
            for (int i = 0; i < rounds; i++) {
                const char *type = (rng() % 2) ? "A" : "B";
                switch (rng() % 6) {
                case 0:
                case 1: {
                    qtbus::options o;
                    o.once = rng() % 5 == 0;
                    if (rng() % 4 == 0) o.on = &q;
                    auto handler = [g = guard()] {
                        if (g.alive->load() == 0) violations++;
                        handled++;
                    };
                    if (rng() % 3 == 0)
                        bag.add(bus.subscribe(type, o, std::move(handler)));
                    else
                        mine.push_back(bus.subscribe(type, o, std::move(handler)));
                    break;
                }
                case 2:
                    if (!mine.empty()) {
                        size_t k = rng() % mine.size();
                        if (rng() % 2) mine[k].dispose();
                        mine.erase(mine.begin() + static_cast<long>(k)); // the destructor disposes
                    }
                    break;
                case 3:
                    if (rng() % 20 == 0) bag.dispose(), bag = qtbus::bag();
                    break;
                default: bus.dispatch(type, "x");
                }
            }
        });
    }
    for (auto &th : pool)
        th.join();
    // Left: the bus's destructor ends the rest; queued work finishes on the queue.
    bus = qtbus::bus();
    wait_until([] { return counted::live.load() == 0; });
    CHECK_EQ(violations.load(), 0L);
    std::printf("cxx_stress: passed (%d threads, %ld handler calls, every capture destroyed once)\n", threads,
                handled.load());
    return 0;
}
