// SPDX-License-Identifier: MIT
// cxx_errors: a failing call says why.  qtbus::error::what() is the reason qtbus_errmsg()
// gave for that call on the failing thread (the call, the name, what is wrong with it),
// not only the status text; status() is still the status.  A failure qtbus.hpp finds
// itself (a NUL byte in a name, an empty subscription given to a bag) is reported as
// the library's are: the same text in qtbus_errmsg() and a MISUSE record for the bus's
// trace hook.  The constructors users call keep their meaning.
#include "cxx_util.hpp"

#include <string>
#include <type_traits>
#include <vector>

static_assert(std::is_constructible_v<qtbus::error, int>, "error(status) as before");
static_assert(std::is_constructible_v<qtbus::error, int, const char *>, "error(status, call) as before");

static bool has(const std::string &text, const char *part) { return text.find(part) != std::string::npos; }

// `run` must throw qtbus::error with `status`; returns its what(), after checking that
// it is what qtbus_errmsg() says on this thread (taken from there, not made up) and
// that it names `call` first.
template <class F>
static std::string reason(int status, const char *call, F run, int line)
{
    try {
        run();
    } catch (const qtbus::error &e) {
        const std::string what = e.what();
        if (e.status() != status || what != qtbus_errmsg() || what.rfind(std::string(call) + ": ", 0) != 0) {
            std::fprintf(stderr,
                         "cxx_errors.cpp:%d: status %d (expected %d), what() \"%s\", qtbus_errmsg() \"%s\", "
                         "expected to start with \"%s: \"\n",
                         line, e.status(), status, what.c_str(), qtbus_errmsg(), call);
            std::_Exit(1);
        }
        return what;
    }
    std::fprintf(stderr, "cxx_errors.cpp:%d: did not throw\n", line);
    std::_Exit(1);
}
#define REASON(status, call, expr)                                                                                     \
    reason(                                                                                                            \
        status, call, [&] { (void)(expr); }, __LINE__)

// MISUSE records of one bus, by its trace hook.
struct misuse_log {
    std::vector<std::string> functions;
    std::vector<int> statuses;
};
static void on_trace(const qtbus_trace_record *r, void *userdata)
{
    auto *log = static_cast<misuse_log *>(userdata);
    log->functions.push_back(r->function ? r->function : "");
    log->statuses.push_back(r->status);
}

static void bad_names()
{
    qtbus::bus bus;
    std::string w = REASON(QTBUS_EINVAL, "qtbus_subscribe", bus.subscribe("", [] {}));
    CHECK(has(w, "type name") && has(w, "\"\"") && has(w, "empty"));

    qtbus::options long_subtype;
    long_subtype.subtypes = {"ok", std::string(300, 's')};
    w = REASON(QTBUS_EINVAL, "qtbus_subscribe", bus.subscribe("Tick", long_subtype, [] {}));
    CHECK(has(w, "subtype") && has(w, "longer than 255 bytes"));

    qtbus::options not_utf8;
    not_utf8.subtypes = {"\xff"};
    w = REASON(QTBUS_EINVAL, "qtbus_subscribe", bus.subscribe("Tick", not_utf8, [] {}));
    CHECK(has(w, "subtype") && has(w, "\\xff") && has(w, "not valid UTF-8"));

    w = REASON(QTBUS_EINVAL, "qtbus_dispatch", bus.dispatch(std::string(300, 'x')));
    CHECK(has(w, "type name") && has(w, "longer than 255 bytes"));
    w = REASON(QTBUS_EINVAL, "qtbus_dispatch", bus.dispatch("Tick", std::string(300, 's'), "data"));
    CHECK(has(w, "subtype") && has(w, "longer than 255 bytes"));
    w = REASON(QTBUS_EINVAL, "qtbus_dispatch_id", bus.dispatch(qtbus_type_id{0}));
    CHECK(has(w, "type id"));
    w = REASON(QTBUS_EINVAL, "qtbus_subscriber_count", bus.subscriber_count("\xff"));
    CHECK(has(w, "not valid UTF-8"));
    w = REASON(QTBUS_EINVAL, "qtbus_type_lookup", bus.type_id(""));
    CHECK(has(w, "empty"));
    w = REASON(QTBUS_EINVAL, "qtbus_request", bus.request("", "", [](const qtbus::event &) {}));
    CHECK(has(w, "empty"));
    w = REASON(QTBUS_EINVAL, "qtbus_command_create", bus.command("", [](qtbus::execution) {}));
    CHECK(has(w, "name") && has(w, "empty"));
    w = REASON(QTBUS_EINVAL, "qtbus_source_create",
               bus.source(
                   "", [] {}, [] {}));
    CHECK(has(w, "empty"));
}

static void stale_handles()
{
    qtbus::bus bus;
    qtbus::source src = bus.source(
        "S", [] {}, [] {});
    src.dispose();
    std::string w = REASON(QTBUS_ESTALE, "qtbus_source_connect", src.connect());
    CHECK(has(w, "source"));

    qtbus::command cmd = bus.command("c", [](qtbus::execution x) { x.finish(); });
    cmd.dispose();
    w = REASON(QTBUS_ESTALE, "qtbus_command_set_enabled", cmd.set_enabled(true));
    CHECK(has(w, "command"));

    qtbus::bag bag;
    bag.dispose();
    qtbus::subscription s = bus.subscribe("Tick", [] {});
    w = REASON(QTBUS_ESTALE, "qtbus_bag_add", bag.add(std::move(s)));
    CHECK(has(w, "bag"));
    CHECK(s.active()); // refused: it stays with its owner

    // A request refused inside a handler: the error routed to the exception handler
    // carries the reason too (taken on the handler's thread).
    std::string routed;
    auto prev = qtbus::set_exception_handler([&](std::exception_ptr p) {
        try {
            std::rethrow_exception(p);
        } catch (const qtbus::error &e) {
            routed = e.what();
        }
    });
    auto replier = bus.subscribe("NotARequest", [](const qtbus::event &e) { e.reply("x"); });
    bus.dispatch("NotARequest");
    qtbus::set_exception_handler(prev);
    CHECK(routed.rfind("qtbus_event_reply: ", 0) == 0 && has(routed, "not a request"));
}

// What qtbus.hpp refuses before any C call goes through qtbus_report(): qtbus_errmsg()
// (checked by REASON) and the bus's trace hook see it.
static void refused_by_the_header()
{
    qtbus::bus bus;
    misuse_log log;
    CHECK_EQ(qtbus_trace_set(bus.c_bus(), QTBUS_TRACE_MISUSE, on_trace, &log, nullptr), QTBUS_OK);

    std::string w = REASON(QTBUS_EINVAL, "qtbus_subscribe", bus.subscribe(std::string_view("a\0b", 3), [] {}));
    CHECK_EQ(w, std::string("qtbus_subscribe: the type name \"a\\x00b\" holds a NUL byte (at byte 1)"));
    qtbus::options nul_subtype;
    nul_subtype.subtypes = {std::string("web\0x", 5)};
    w = REASON(QTBUS_EINVAL, "qtbus_subscribe", bus.subscribe("Tick", nul_subtype, [] {}));
    CHECK(has(w, "the subtype \"web\\x00x\" holds a NUL byte"));
    w = REASON(QTBUS_EINVAL, "qtbus_dispatch", bus.dispatch(std::string_view("T\0", 2), "data"));
    CHECK(has(w, "type name") && has(w, "NUL"));
    CHECK_EQ(log.functions.size(), 3u);
    CHECK_EQ(log.functions[0], std::string("qtbus_subscribe"));
    CHECK_EQ(log.functions[2], std::string("qtbus_dispatch"));
    CHECK_EQ(log.statuses[2], QTBUS_EINVAL);
    CHECK_EQ(qtbus_trace_set(bus.c_bus(), 0, nullptr, nullptr, nullptr), QTBUS_OK);

    // An empty subscription (moved from, default-made, released, disposed) never held
    // what a bag is meant to keep: refused, not silently accepted.
    qtbus::bag bag;
    qtbus::subscription s = bus.subscribe("Tick", [] {});
    qtbus::subscription moved = std::move(s);
    w = REASON(QTBUS_EINVAL, "qtbus_bag_add", bag.add(std::move(s)));
    CHECK(has(w, "empty"));
    qtbus::subscription none;
    REASON(QTBUS_EINVAL, "qtbus_bag_add", bag += std::move(none));
    bag.add(std::move(moved)); // a live one is taken
    CHECK_EQ(bus.subscriber_count("Tick"), 1);
    bag.dispose();
    CHECK_EQ(bus.subscriber_count("Tick"), 0);
}

static void constructors_and_capture()
{
    // The constructors users call: the status text after the call's name.
    qtbus::error plain(QTBUS_ESTALE, "my_call");
    CHECK_EQ(plain.status(), QTBUS_ESTALE);
    CHECK_EQ(std::string(plain.what()), std::string("my_call: ") + qtbus_strerror(QTBUS_ESTALE));
    CHECK_EQ(std::string(qtbus::error(QTBUS_EINVAL).what()), std::string("qtbus: ") + qtbus_strerror(QTBUS_EINVAL));
    // With a reason: as given; an empty one falls back to the status text.
    CHECK_EQ(std::string(qtbus::error(QTBUS_EIO, "my_call", "my_call: the server went away").what()),
             std::string("my_call: the server went away"));
    CHECK_EQ(std::string(qtbus::error(QTBUS_EIO, "my_call", "").what()),
             std::string("my_call: ") + qtbus_strerror(QTBUS_EIO));

    // Taken at the failure: a later failure on the thread does not change it.
    qtbus::bus bus;
    std::string first;
    try {
        (void)bus.subscribe("", [] {});
    } catch (const qtbus::error &e) {
        first = e.what();
        REASON(QTBUS_EINVAL, "qtbus_dispatch", bus.dispatch(std::string(300, 'x')));
        CHECK_EQ(std::string(e.what()), first);
    }
    CHECK(has(first, "qtbus_subscribe: "));
    // A reason qtbus_errmsg() still holds from another call's failure is not passed off
    // as this call's: the status text is used instead.
    CHECK(std::string(qtbus_errmsg()).rfind("qtbus_dispatch: ", 0) == 0);
    CHECK_EQ(std::string(qtbus::detail::failure(QTBUS_ESTALE, "qtbus_token_dispose").what()),
             std::string("qtbus_token_dispose: ") + qtbus_strerror(QTBUS_ESTALE));
}

int main()
{
    bad_names();
    stale_handles();
    refused_by_the_header();
    constructors_and_capture();
    std::puts("cxx_errors: passed");
    return 0;
}
