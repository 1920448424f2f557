// SPDX-License-Identifier: MIT
// cxx_ownership: a callable given to qtbus.hpp is destroyed exactly once, on every path
// that ends it (lifetime rule 1), including a failed call (then it is never called and
// the caller gets qtbus::error); captures may be move-only.
#include "cxx_util.hpp"

#include <memory>

int main()
{
    // Move-only captures: a lambda holding a std::unique_ptr is accepted as a handler.
    {
        qtbus::bus bus;
        auto owned = std::make_unique<int>(7);
        int seen = 0;
        auto s = bus.subscribe("E", [p = std::move(owned), &seen](const qtbus::event &) { seen = *p; });
        bus.dispatch("E");
        CHECK_EQ(seen, 7);
    }

    qtbus::bus bus;
    // Each path, one capture each: live returns to 0 after the path ends.
    { // dispose()
        auto s = bus.subscribe("E", [c = counted()] {});
        CHECK_EQ(counted::live.load(), 1);
        s.dispose();
        CHECK_EQ(counted::live.load(), 0);
    }
    { // the subscription's destructor
        {
            auto s = bus.subscribe("E", [c = counted()] {});
        }
        CHECK_EQ(counted::live.load(), 0);
    }
    { // a bag
        qtbus::bag bag;
        bag.add(bus.subscribe("E", [c = counted()] {}));
        bag.add(bus.subscribe("E", [c = counted()] {}));
        CHECK_EQ(counted::live.load(), 2);
        bag.dispose();
        CHECK_EQ(counted::live.load(), 0);
    }
    { // once: destroyed after its one delivery, while the object still exists
        qtbus::options once;
        once.once = true;
        auto s = bus.subscribe("E", once, [c = counted()] {});
        bus.dispatch("E");
        CHECK_EQ(counted::live.load(), 0);
        CHECK(!s.active());
    }
    { // the bus destroyed, subscription detached or not
        qtbus::subscription kept;
        {
            qtbus::bus other;
            kept = other.subscribe("E", [c = counted()] {});
            other.subscribe("E", [c = counted()] {}).release();
            CHECK_EQ(counted::live.load(), 2);
        }
        CHECK_EQ(counted::live.load(), 0);
    }
    { // disposed from inside its own handler: destroyed after the handler returned
        qtbus::subscription self;
        bool inside_alive = false;
        self = bus.subscribe("Self", [c = counted(), &self, &inside_alive] {
            self.dispose();
            inside_alive = counted::live.load() == 1; // still here: this call runs
        });
        bus.dispatch("Self");
        CHECK(inside_alive);
        CHECK_EQ(counted::live.load(), 0);
    }
    { // queued: destroyed after the queued deliveries ran
        qtbus::queue q("own");
        qtbus::options on_q;
        on_q.on = &q;
        std::atomic<int> ran{0};
        auto s = bus.subscribe("Q", on_q, [c = counted(), &ran] { ran++; });
        for (int i = 0; i < 100; i++)
            bus.dispatch("Q");
        s.dispose();
        wait_until([] { return counted::live.load() == 0; });
    }
    { // a failed subscribe: the callable is destroyed, never called, and nothing leaks
        bool called = false;
        CHECK_THROWS(QTBUS_EINVAL, bus.subscribe("bad\xff", [c = counted(), &called] { called = true; }));
        CHECK_EQ(counted::live.load(), 0);
        CHECK(!called);
    }
    { // requests: both callables go after the completion
        auto r = bus.subscribe("Ask", [](const qtbus::event &e) { e.reply("yes"); });
        int replies = 0;
        bus.request(
            "Ask", "", [c = counted(), &replies](const qtbus::event &) { replies++; }, [c = counted()] {});
        CHECK_EQ(replies, 1);
        CHECK_EQ(counted::live.load(), 0);
        CHECK_THROWS(QTBUS_EINVAL, bus.request("", "", [c = counted()](const qtbus::event &) {}));
        CHECK_EQ(counted::live.load(), 0);
    }
    { // commands and sources: destroyed at dispose, or when creation fails
        auto cmd = bus.command("c", [c = counted()](qtbus::execution x) { x.finish(); });
        auto src = bus.source(
            "S", [c = counted()](qtbus::bus_ref) {}, [c = counted()] {});
        CHECK_EQ(counted::live.load(), 3);
        cmd.dispose();
        src.dispose();
        CHECK_EQ(counted::live.load(), 0);
        CHECK_THROWS(QTBUS_EINVAL, bus.command("", [c = counted()](qtbus::execution) {}));
        CHECK_THROWS(QTBUS_EINVAL, bus.source(
                                       "", [c = counted()] {}, [] {}));
        CHECK_EQ(counted::live.load(), 0);
    }
    std::puts("cxx_ownership: passed");
    return 0;
}
