// SPDX-License-Identifier: MIT
// cxx_util.hpp -- helpers shared by the qtbus C++ tests (CxxTests/).
//
//   CHECK(cond)          fails the test (file:line, the expression) unless cond holds
//   CHECK_EQ(a, b)       same, printing both values
//   CHECK_THROWS(status, expr)  expr throws qtbus::error with that status
//   wait_until(cond)     bounded wait (10 s) for work on queues, polling every ms
//   counted              a capture that counts its live copies (destroyed exactly once)
//   gate                 holds a queue: its handler waits until open(); close() re-arms it
//
// A failed check ends the process at once with exit status 1.
#ifndef QTBUS_CXX_UTIL_HPP
#define QTBUS_CXX_UTIL_HPP

#include <qtbus.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <thread>

#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            std::fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);                              \
            std::_Exit(1);                                                                                             \
        }                                                                                                              \
    } while (0)

#define CHECK_EQ(a, b)                                                                                                 \
    do {                                                                                                               \
        auto va_ = (a);                                                                                                \
        auto vb_ = (b);                                                                                                \
        if (!(va_ == vb_)) {                                                                                           \
            std::cerr << __FILE__ << ":" << __LINE__ << ": CHECK_EQ(" #a ", " #b "): " << va_ << " != " << vb_         \
                      << std::endl;                                                                                    \
            std::_Exit(1);                                                                                             \
        }                                                                                                              \
    } while (0)

#define CHECK_THROWS(expected, expr)                                                                                   \
    do {                                                                                                               \
        bool thrown_ = false;                                                                                          \
        try {                                                                                                          \
            (void)(expr);                                                                                              \
        } catch (const qtbus::error &e_) {                                                                             \
            thrown_ = true;                                                                                            \
            CHECK_EQ(e_.status(), (expected));                                                                         \
        }                                                                                                              \
        if (!thrown_) {                                                                                                \
            std::fprintf(stderr, "%s:%d: %s did not throw\n", __FILE__, __LINE__, #expr);                              \
            std::_Exit(1);                                                                                             \
        }                                                                                                              \
    } while (0)

template <class F>
inline void wait_until(F cond)
{
    for (int i = 0; i < 10000; i++) {
        if (cond()) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::fprintf(stderr, "wait_until: timed out\n");
    std::_Exit(1);
}

// A queue's first handler that holds the queue until opened, so deliveries wait behind
// it: subscribe gate.handler() to "Gate" on the queue, then gate.hold(bus).
struct gate {
    std::atomic<bool> opened{false};
    std::atomic<int> entered{0};
    auto handler()
    {
        return [this] {
            entered++;
            while (!opened.load())
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
        };
    }
    // Dispatches "Gate" and waits until its handler holds the queue.
    void hold(qtbus::bus_ref bus)
    {
        opened = false;
        int before = entered.load();
        CHECK_EQ(bus.dispatch("Gate"), 1);
        wait_until([&] { return entered.load() > before; });
    }
    void open() { opened = true; }
};

// Counts live instances: a capture moved into a subscription must end up destroyed
// exactly once whatever path ends it (moved-from shells do not count).
struct counted {
    static inline std::atomic<int> live{0};
    bool owns = true;
    counted() { live++; }
    counted(const counted &o) : owns(o.owns)
    {
        if (owns) live++;
    }
    counted(counted &&o) noexcept : owns(o.owns) { o.owns = false; }
    counted &operator=(const counted &) = delete;
    counted &operator=(counted &&) = delete;
    ~counted()
    {
        if (owns) live--;
    }
};

#endif
