// SPDX-License-Identifier: MIT
// cxx_block: subscription::block()/unblock() and qtbus::scoped_block.
//
// Users rely on: block() and unblock() nesting as the C calls do and throwing
// qtbus::error with the C status (QTBUS_EINVAL for an unblock too many, QTBUS_ESTALE
// for a subscription that ended and for an empty one), with qtbus_errmsg()'s reason; a
// scoped_block blocking for its scope and unblocking once in its destructor, nested
// ones nesting, a failed one blocking nothing, and its destructor never throwing
// though the subscription ended meanwhile (disposed, moved and dropped, its bus
// destroyed); typed signal connections blocked alike; scoped_block neither copyable
// nor movable.
#include "cxx_util.hpp"

#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

static_assert(!std::is_copy_constructible_v<qtbus::scoped_block>, "one block, one unblock");
static_assert(!std::is_move_constructible_v<qtbus::scoped_block>, "one block, one unblock");
static_assert(!std::is_copy_assignable_v<qtbus::scoped_block>, "one block, one unblock");
static_assert(!std::is_move_assignable_v<qtbus::scoped_block>, "one block, one unblock");
static_assert(std::is_nothrow_destructible_v<qtbus::scoped_block>, "never throws");
static_assert(!std::is_convertible_v<const qtbus::subscription &, qtbus::scoped_block>, "explicit");

static bool has(const std::string &text, const char *part) { return text.find(part) != std::string::npos; }

static void block_and_unblock()
{
    qtbus::bus bus;
    int calls = 0;
    qtbus::subscription s = bus.subscribe("Login", [&] { calls++; });
    s.block();
    s.block();
    CHECK_EQ(bus.dispatch("Login"), 0);
    CHECK(s.active());
    CHECK_EQ(bus.subscriber_count("Login"), 1);
    s.unblock();
    CHECK_EQ(bus.dispatch("Login"), 0);
    s.unblock();
    CHECK_EQ(bus.dispatch("Login"), 1);
    CHECK_EQ(calls, 1);

    // An unblock too many: QTBUS_EINVAL, with the reason, and nothing changes.
    try {
        s.unblock();
        CHECK(!"unblock too many did not throw");
    } catch (const qtbus::error &e) {
        CHECK_EQ(e.status(), QTBUS_EINVAL);
        CHECK(has(e.what(), "qtbus_token_unblock: ") && has(e.what(), "not blocked"));
    }
    CHECK_EQ(bus.dispatch("Login"), 1);

    // Ended: QTBUS_ESTALE, from both.
    s.block();
    qtbus_token t = s.c_token();
    qtbus::subscription adopted(t);
    (void)s.release();
    adopted.dispose();
    qtbus::subscription ended(t);
    CHECK_THROWS(QTBUS_ESTALE, ended.block());
    CHECK_THROWS(QTBUS_ESTALE, ended.unblock());
    (void)ended.release();

    // Empty (default-made, moved from, released, disposed): QTBUS_ESTALE, the C status
    // of the token {0}.
    qtbus::subscription empty;
    CHECK_THROWS(QTBUS_ESTALE, empty.block());
    CHECK_THROWS(QTBUS_ESTALE, empty.unblock());
    qtbus::subscription moved = bus.subscribe("Login", [] {});
    qtbus::subscription to(std::move(moved));
    CHECK_THROWS(QTBUS_ESTALE, moved.block()); // NOLINT(bugprone-use-after-move): the point
    to.dispose();
    CHECK_THROWS(QTBUS_ESTALE, to.block());
}

static void scoped()
{
    qtbus::bus bus;
    int calls = 0;
    qtbus::subscription s = bus.subscribe("Tick", [&] { calls++; });
    {
        qtbus::scoped_block quiet(s);
        CHECK_EQ(quiet.c_token().id, s.c_token().id);
        CHECK_EQ(bus.dispatch("Tick"), 0);
        {
            qtbus::scoped_block quieter(s);
            CHECK_EQ(bus.dispatch("Tick"), 0);
        }
        CHECK_EQ(bus.dispatch("Tick"), 0); // still blocked once
    }
    CHECK_EQ(bus.dispatch("Tick"), 1);
    CHECK_EQ(calls, 1);
    CHECK_THROWS(QTBUS_EINVAL, s.unblock()); // the scopes unblocked exactly as often

    // A scope left by an exception unblocks too.
    try {
        qtbus::scoped_block quiet(s);
        throw std::runtime_error("leaving");
    } catch (const std::runtime_error &) {
    }
    CHECK_EQ(bus.dispatch("Tick"), 1);

    // A failed scoped_block throws and blocks nothing (no destructor runs).
    qtbus::subscription empty;
    CHECK_THROWS(QTBUS_ESTALE, qtbus::scoped_block(empty));

    // Ended meanwhile: the destructor ignores it, and leaves qtbus_errmsg() alone.
    qtbus::subscription other = bus.subscribe("Tick", [] {});
    qtbus_report(nullptr, "cxx_block", QTBUS_EBUSY, "marker");
    {
        qtbus::scoped_block quiet(other);
        other.dispose();
    }
    CHECK_EQ(std::string(qtbus_errmsg()), "cxx_block: marker");
    {
        qtbus::scoped_block quiet(s);
        qtbus::subscription gone = std::move(s); // the token is held, not the object
        CHECK_EQ(bus.dispatch("Tick"), 0);
    }
    CHECK_EQ(calls, 2);

    // Its bus destroyed meanwhile.
    auto doomed = std::make_unique<qtbus::bus>();
    qtbus::subscription d = doomed->subscribe("X", [] {});
    {
        qtbus::scoped_block quiet(d);
        doomed.reset();
    }
    CHECK(!d.active());
}

static void typed_signal()
{
    qtbus::bus bus;
    qtbus::signal<void(int32_t, std::string_view)> login(bus, "Login");
    int calls = 0;
    qtbus::subscription s = login.connect([&](int32_t, std::string_view) { calls++; });
    {
        qtbus::scoped_block quiet(s);
        CHECK_EQ(login.emit(1, "alice"), 0);
    }
    CHECK_EQ(login.emit(2, "bob"), 1);
    CHECK_EQ(calls, 1);
}

// Queued deliveries made before the block still run; none is made while blocked.
static void queued()
{
    qtbus::bus bus;
    qtbus::queue q("cxx_block");
    gate g;
    qtbus::options on_q;
    on_q.on = &q;
    qtbus::subscription hold = bus.subscribe("Gate", on_q, g.handler());
    std::atomic<int> calls{0};
    qtbus::subscription s = bus.subscribe("Q", on_q, [&] { calls++; });
    g.hold(bus);
    CHECK_EQ(bus.dispatch("Q"), 1);
    {
        qtbus::scoped_block quiet(s);
        CHECK_EQ(bus.dispatch("Q"), 0);
        CHECK_EQ(q.stats().pending, 1u);
    }
    g.open();
    CHECK(bus.wait_idle(std::chrono::seconds(10)));
    CHECK_EQ(calls.load(), 1);
}

int main()
{
    block_and_unblock();
    scoped();
    typed_signal();
    queued();
    std::printf("cxx_block: ok\n");
    return 0;
}
