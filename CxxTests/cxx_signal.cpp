// SPDX-License-Identifier: MIT
// cxx_signal: qtbus::signal<void(Args...)> (qtbus.hpp's RULES, "Typed signals"): every
// kind and the ways a slot may take it, slots taking the first arguments, generic and
// function-pointer slots, options (subtypes, priority, once, a queue), emit's result,
// the packing (on the stack, on the heap past 512 bytes, 16 arguments, none), bytes
// that are not the signature's (the slot is skipped, nothing is read out of bounds), a
// signature the bus has already, a NUL byte in a string, a slot that throws, emits
// and plain dispatches from inside a slot, and two threads emitting at once.
#include "cxx_util.hpp"

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

static void every_kind()
{
    qtbus::bus bus;
    int target = 7;
    const double constant = 0.5;
    using all = qtbus::signal<void(int32_t, uint32_t, int64_t, uint64_t, double, std::string_view, const char *,
                                   std::string, int *, const double *)>;
    all sig(bus, "All");
    CHECK_EQ(all::arity, 10u);
    int calls = 0;
    qtbus::subscription s = sig.connect([&](int32_t a, uint32_t b, int64_t c, uint64_t d, double e, std::string_view f,
                                            const char *g, std::string h, int *i, const double *j) {
        CHECK_EQ(a, std::numeric_limits<int32_t>::min());
        CHECK_EQ(b, std::numeric_limits<uint32_t>::max());
        CHECK_EQ(c, std::numeric_limits<int64_t>::min());
        CHECK_EQ(d, std::numeric_limits<uint64_t>::max());
        CHECK(std::isnan(e));
        CHECK_EQ(f, std::string_view("h\xc3\xa9llo"));
        CHECK(g == nullptr);
        CHECK_EQ(h, std::string(""));
        CHECK(i == &target);
        CHECK(j == &constant);
        calls++;
    });
    CHECK_EQ(sig.emit(std::numeric_limits<int32_t>::min(), std::numeric_limits<uint32_t>::max(),
                      std::numeric_limits<int64_t>::min(), std::numeric_limits<uint64_t>::max(),
                      std::numeric_limits<double>::quiet_NaN(), "h\xc3\xa9llo", nullptr, std::string(), &target,
                      &constant),
             1);
    CHECK_EQ(calls, 1);
    CHECK_EQ(sig.type(), std::string("All"));
    CHECK(sig.type_id().id != 0);

    s.dispose();

    // What C sees: the kinds of the signature, in the bytes' header.
    qtbus::subscription plain = bus.subscribe("All", [&](const qtbus::event &e) {
        qtbus_value v[QTBUS_SIGNAL_MAX_ARGS];
        CHECK_EQ(qtbus_event_args(e.c_event(), v, QTBUS_SIGNAL_MAX_ARGS), 10);
        const std::string_view bytes = e.data();
        const unsigned char kinds[] = {QTBUS_ARG_INT32,   QTBUS_ARG_UINT32, QTBUS_ARG_INT64,  QTBUS_ARG_UINT64,
                                       QTBUS_ARG_DOUBLE,  QTBUS_ARG_STRING, QTBUS_ARG_STRING, QTBUS_ARG_STRING,
                                       QTBUS_ARG_POINTER, QTBUS_ARG_POINTER};
        CHECK(std::memcmp(bytes.data() + 8, kinds, sizeof kinds) == 0);
        CHECK_EQ(v[0].i32, 1);
        CHECK(v[6].str == nullptr);
        CHECK_EQ(std::string(v[7].str), std::string("seven"));
        calls++;
    });
    CHECK_EQ(sig(1, 2, 3, 4, 5.0, "six", nullptr, "seven", &target, &constant), 1);
    CHECK_EQ(calls, 2);
}

static void strings_three_ways()
{
    qtbus::bus bus;
    qtbus::signal<void(std::string)> sig(bus, "Text");
    std::vector<std::string> got;
    qtbus::subscription a = sig.connect([&](std::string_view s) { got.push_back("view:" + std::string(s)); });
    qtbus::subscription b = sig.connect([&](const char *s) { got.push_back(std::string("c:") + s); });
    qtbus::subscription c = sig.connect([&](std::string s) { got.push_back("string:" + s); });
    qtbus::subscription d = sig.connect([&](const std::string &s) { got.push_back("cref:" + s); });
    qtbus::subscription e = sig.connect([&](std::string &&s) { got.push_back("rref:" + std::move(s)); });
    const std::string text = "alice";
    CHECK_EQ(sig.emit(text), 5); // a std::string
    CHECK_EQ(sig("bob"), 5);     // a literal
    CHECK_EQ(got.size(), 10u);
    CHECK_EQ(got[0], std::string("view:alice"));
    CHECK_EQ(got[1], std::string("c:alice"));
    CHECK_EQ(got[2], std::string("string:alice"));
    CHECK_EQ(got[3], std::string("cref:alice"));
    CHECK_EQ(got[4], std::string("rref:alice"));
    CHECK_EQ(got[9], std::string("rref:bob"));

    // A null const char * stays NULL: nullptr to a const char * slot, empty to the others.
    qtbus::signal<void(const char *)> nullable(bus, "Nullable");
    std::vector<std::string> seen;
    qtbus::subscription n1 = nullable.connect([&](const char *s) { seen.push_back(s ? s : "NULL"); });
    qtbus::subscription n2 = nullable.connect([&](std::string_view s) { seen.push_back("[" + std::string(s) + "]"); });
    qtbus::subscription n3 = nullable.connect([&](const std::string &s) { seen.push_back("{" + s + "}"); });
    CHECK_EQ(nullable(nullptr), 3);
    CHECK_EQ(nullable(""), 3);
    CHECK_EQ(seen.size(), 6u);
    CHECK_EQ(seen[0], std::string("NULL"));
    CHECK_EQ(seen[1], std::string("[]"));
    CHECK_EQ(seen[2], std::string("{}"));
    CHECK_EQ(seen[3], std::string("")); // "" is not NULL

    // Past the 512 bytes packed on the stack: the emit allocates, and the bytes are the same.
    qtbus::signal<void(std::string_view, std::string_view)> two(bus, "Two");
    for (size_t n : {0u, 100u, 480u, 481u, 495u, 496u, 497u, 600u, 100000u}) {
        const std::string x(n, 'x'), y(n / 2 + 1, 'y');
        size_t seen_x = 0, seen_y = 0;
        qtbus::subscription s = two.connect([&](std::string_view a, std::string_view b) {
            CHECK(a == x && b == y);
            seen_x = a.size();
            seen_y = b.size();
        });
        CHECK_EQ(two(x, y), 1);
        CHECK_EQ(seen_x, x.size());
        CHECK_EQ(seen_y, y.size());
    }

    // A std::string_view with a NUL byte cannot be a C string: refused, nothing sent.
    int reached = 0;
    qtbus::subscription r = sig.connect([&] { reached++; });
    CHECK_THROWS(QTBUS_EINVAL, sig(std::string("a\0b", 3)));
    CHECK_EQ(std::string(qtbus_errmsg()),
             std::string("qtbus_dispatch_id: argument 1 \"a\\x00b\" holds a NUL byte (at byte 1)"));
    CHECK_THROWS(QTBUS_EINVAL, two("ok", std::string_view("\0", 1)));
    CHECK_EQ(reached, 0);
}

static int32_t last_by_pointer = 0;
static void slot_function(int32_t v) { last_by_pointer = v; }
static int slot_returning(int32_t v, std::string_view) { return v * 2; }

struct overloaded {
    std::vector<std::string> *log;
    void operator()() { log->push_back("()"); }
    void operator()(int32_t a) { log->push_back("(" + std::to_string(a) + ")"); }
};

static void the_slots_a_signal_takes()
{
    qtbus::bus bus;
    qtbus::signal<void(int32_t, std::string_view, double)> sig(bus, "Slots");
    std::vector<std::string> log;
    // Fewer parameters: the first arguments (Qt's rule; what boost::bind and
    // sigc::hide do for such a slot).
    qtbus::subscription none = sig.connect([&] { log.push_back("none"); });
    qtbus::subscription one = sig.connect([&](int32_t a) { log.push_back("one " + std::to_string(a)); });
    qtbus::subscription two = sig.connect(
        [&](int32_t a, std::string_view b) { log.push_back("two " + std::to_string(a) + " " + std::string(b)); });
    // A generic lambda gets the declared types, all it can take.
    qtbus::subscription generic = sig.connect([&](auto a, auto b, auto c) {
        static_assert(std::is_same_v<decltype(a), int32_t> && std::is_same_v<decltype(b), std::string_view> &&
                      std::is_same_v<decltype(c), double>);
        log.push_back("generic " + std::to_string(a) + " " + std::string(b) + " " + std::to_string(int(c)));
    });
    qtbus::subscription variadic =
        sig.connect([&](auto &&...xs) { log.push_back("variadic " + std::to_string(sizeof...(xs))); });
    // An overloaded call operator: the overload taking the most leading arguments.
    qtbus::subscription over = sig.connect(overloaded{&log});
    // A function pointer, a function returning a value (dropped), a std::function, a
    // mutable lambda keeping state.
    qtbus::subscription fp = sig.connect(&slot_function);
    qtbus::subscription ret = sig.connect(&slot_returning);
    qtbus::subscription fn =
        sig.connect(std::function<void(int32_t)>([&](int32_t a) { log.push_back("function " + std::to_string(a)); }));
    qtbus::subscription counter =
        sig.connect([n = 0, &log](int32_t) mutable { log.push_back("mutable " + std::to_string(++n)); });
    qtbus::subscription noexcept_slot = sig.connect([&](int32_t, std::string_view, const double &c) noexcept {
        log.push_back("noexcept " + std::to_string(int(c)));
    });
    CHECK_EQ(sig(4, "four", 4.0), 11);
    CHECK_EQ(sig(5, "five", 5.0), 11);
    const std::vector<std::string> expected = {"none", "one 4",      "two 4 four", "generic 4 four 4", "variadic 3",
                                               "(4)",  "function 4", "mutable 1",  "noexcept 4"};
    CHECK_EQ(log.size(), 2 * expected.size());
    for (size_t i = 0; i < expected.size(); i++)
        CHECK_EQ(log[i], expected[i]);
    CHECK_EQ(log[expected.size() + 7], std::string("mutable 2"));
    CHECK_EQ(last_by_pointer, 5);

    // A signal is a slot too (sigc++'s make_slot, Boost's signal-to-signal connect): a
    // copy forwards to the type it names.
    qtbus::signal<void(int32_t)> inner(bus, "Inner");
    qtbus::signal<void(int32_t)> outer(bus, "Outer");
    int32_t forwarded = 0;
    qtbus::subscription i1 = inner.connect([&](int32_t v) { forwarded = v; });
    qtbus::subscription o1 = outer.connect(inner);
    CHECK_EQ(outer(9), 1);
    CHECK_EQ(forwarded, 9);
}

static void arities()
{
    qtbus::bus bus;
    qtbus::signal<void()> tick(bus, "Tick");
    int ticks = 0;
    qtbus::subscription t = tick.connect([&] { ticks++; });
    CHECK_EQ(tick(), 1);
    CHECK_EQ(tick.emit_subtype("sub"), 1);
    CHECK_EQ(ticks, 2);
    CHECK_EQ(bus.subscriber_count("Tick"), 1);

    using sixteen =
        qtbus::signal<void(int32_t, int64_t, std::string_view, double, uint32_t, uint64_t, const char *, int32_t,
                           int64_t, std::string, double, uint32_t, uint64_t, std::string_view, void *, int32_t)>;
    sixteen s16(bus, "Sixteen");
    std::string seen;
    qtbus::subscription s = s16.connect([&](int32_t a, int64_t b, std::string_view c, double d, uint32_t e, uint64_t f,
                                            const char *g, int32_t h, int64_t i, std::string j, double k, uint32_t l,
                                            uint64_t m, std::string_view n, void *o, int32_t p) {
        seen = std::to_string(a + b + int(d) + e + f + h + i + int(k) + l + m + p) + std::string(c) + g + j +
               std::string(n) + (o ? "p" : "0");
    });
    CHECK_EQ(s16(1, 2, "c", 4.0, 5, 6, "g", 8, 9, "j", 11.0, 12, 13, "n", nullptr, 16), 1);
    CHECK_EQ(seen, std::string("87cgjn0"));
}

static void options_apply()
{
    qtbus::bus bus;
    qtbus::signal<void(std::string_view, int32_t)> sig(bus, "Opt");
    std::vector<std::string> order;
    qtbus::options eur;
    eur.subtypes = {"EUR"};
    qtbus::options high;
    high.priority = 10;
    qtbus::options once;
    once.once = true;
    qtbus::subscription a = sig.connect(eur, [&](std::string_view s) { order.push_back("eur " + std::string(s)); });
    qtbus::subscription b = sig.connect([&](std::string_view s) { order.push_back("all " + std::string(s)); });
    qtbus::subscription c = sig.connect(high, [&](std::string_view s) { order.push_back("high " + std::string(s)); });
    qtbus::subscription d = sig.connect(once, [&](std::string_view s) { order.push_back("once " + std::string(s)); });
    CHECK_EQ(sig.emit_subtype("EUR", "x", 1), 4);
    CHECK_EQ(sig.emit_subtype("USD", "y", 2), 2);
    CHECK_EQ(sig("z", 3), 2);
    const std::vector<std::string> expected = {"high x", "eur x", "all x",  "once x",
                                               "high y", "all y", "high z", "all z"};
    CHECK_EQ(order.size(), expected.size());
    for (size_t i = 0; i < expected.size(); i++)
        CHECK_EQ(order[i], expected[i]);
    CHECK(!d.active());
    CHECK_THROWS(QTBUS_EINVAL, sig.emit_subtype(std::string_view("a\0b", 3), "x", 1));

    // On a queue: the slot runs after the emit returned, from the engine's copy of the
    // bytes (the emit's own were on its stack).
    qtbus::queue q("signals");
    std::atomic<int> done{0};
    std::string queued;
    qtbus::options on;
    on.on = &q;
    qtbus::subscription e = sig.connect(on, [&](std::string s, int32_t n) {
        queued += s + std::to_string(n) + ";";
        done++;
    });
    {
        std::string text(1000, 'q');
        CHECK_EQ(sig(text, 1), 3);
        CHECK_EQ(sig("short", 2), 3);
    }
    wait_until([&] { return done.load() == 2; });
    CHECK_EQ(queued, std::string(1000, 'q') + "1;short2;");

    // A pattern is not a signal's: refused.
    qtbus::options pattern;
    pattern.pattern = true;
    CHECK_THROWS(QTBUS_EINVAL, sig.connect(pattern, [] {}));
}

static void dispatch_bytes(qtbus::bus_ref bus, const char *type, const void *bytes, size_t size, int expect)
{
    // Copied to a block of exactly `size` bytes: ASan and valgrind see a read past it.
    std::unique_ptr<unsigned char[]> copy(new unsigned char[size ? size : 1]);
    if (size) std::memcpy(copy.get(), bytes, size);
    qtbus_event_desc d{};
    d.type = type;
    d.data = size ? copy.get() : nullptr;
    d.size = size;
    CHECK_EQ(bus.dispatch(d), expect);
}

static size_t header(unsigned char *b, unsigned count)
{
    std::memcpy(b, "QTSG", 4);
    b[4] = QTBUS_SIGNAL_LAYOUT_VERSION;
    b[5] = static_cast<unsigned char>(count);
    b[6] = b[7] = 0;
    return 8;
}

static void bytes_that_are_not_the_signatures()
{
    qtbus::bus bus;
    qtbus::signal<void(std::string_view, int32_t)> sig(bus, "Foreign");
    int typed = 0, plain = 0;
    std::string text;
    qtbus::subscription s = sig.connect([&](std::string_view t, int32_t) {
        text = std::string(t);
        typed++;
    });
    qtbus::subscription p = bus.subscribe("Foreign", [&] { plain++; });

    // Built by hand from the documented layout: read.
    unsigned char b[64] = {};
    header(b, 2);
    b[8] = QTBUS_ARG_STRING;
    b[9] = QTBUS_ARG_INT32;
    const uint64_t offset = 32;
    std::memcpy(b + 16, &offset, 8);
    const int32_t n = -5;
    std::memcpy(b + 24, &n, 4);
    std::memcpy(b + 32, "hand", 5);
    dispatch_bytes(bus, "Foreign", b, 37, 2);
    CHECK_EQ(typed, 1);
    CHECK_EQ(text, std::string("hand"));

    // Not this signature's arguments: the slot is skipped, the plain handler runs.
    struct bad {
        const char *what;
        unsigned char bytes[64];
        size_t size;
    } cases[16] = {};
    int count = 0;
    auto add = [&](const char *what, size_t size) -> unsigned char * {
        cases[count].what = what;
        cases[count].size = size;
        return cases[count++].bytes;
    };
    std::memcpy(add("plain text", 5), "hello", 5);
    add("empty", 0);
    std::memcpy(add("magic only", 4), "QTSG", 4);
    header(add("header, 7 bytes", 7), 0);
    {
        unsigned char *q = add("wrong version", 40);
        std::memcpy(q, b, 37);
        q[4] = 99;
    }
    {
        unsigned char *q = add("one argument", 24);
        header(q, 1);
        q[8] = QTBUS_ARG_STRING;
    }
    {
        unsigned char *q = add("other kinds", 40);
        std::memcpy(q, b, 37);
        q[9] = QTBUS_ARG_UINT32;
    }
    {
        unsigned char *q = add("slots cut off", 30);
        std::memcpy(q, b, 30);
    }
    {
        unsigned char *q = add("offset past the end", 37);
        std::memcpy(q, b, 37);
        uint64_t o = 1000;
        std::memcpy(q + 16, &o, 8);
    }
    {
        unsigned char *q = add("offset into the slots", 37);
        std::memcpy(q, b, 37);
        uint64_t o = 20;
        std::memcpy(q + 16, &o, 8);
    }
    {
        unsigned char *q = add("no NUL", 36);
        std::memcpy(q, b, 36);
    }
    {
        unsigned char *q = add("offset huge", 37);
        std::memcpy(q, b, 37);
        uint64_t o = UINT64_MAX;
        std::memcpy(q + 16, &o, 8);
    }
    for (int i = 0; i < count; i++) {
        const int before = typed;
        dispatch_bytes(bus, "Foreign", cases[i].bytes, cases[i].size, 2);
        if (typed != before) {
            std::fprintf(stderr, "the slot read bytes that are not its signature's: %s\n", cases[i].what);
            std::_Exit(1);
        }
    }
    CHECK_EQ(plain, 1 + count);
    // A NULL string (offset 0) is a string all the same.
    {
        unsigned char q[32] = {};
        std::memcpy(q, b, 32);
        uint64_t o = 0;
        std::memcpy(q + 16, &o, 8);
        dispatch_bytes(bus, "Foreign", q, 32, 2);
    }
    CHECK_EQ(typed, 2);
    CHECK_EQ(text, std::string(""));
}

static void a_signature_the_bus_has()
{
    qtbus::bus bus;
    qtbus::signal<void(std::string_view, int32_t)> first(bus, "Login");
    // The same kinds, declared with other C++ types: one signature.
    qtbus::signal<void(const char *, int32_t)> second(bus, "Login");
    qtbus::signal<void(std::string, int32_t)> third(bus, "Login");
    CHECK_EQ(second.type_id().id, first.type_id().id);
    // Another one: refused, with the library's reason.
    bool thrown = false;
    try {
        qtbus::signal<void(std::string_view, int64_t)> other(bus, "Login");
    } catch (const qtbus::error &e) {
        thrown = true;
        CHECK_EQ(e.status(), QTBUS_EINVAL);
        CHECK_EQ(std::string(e.what()),
                 std::string("qtbus_signal_define: the type has another signature on this bus already"));
    }
    CHECK(thrown);
    // One a C program defined is checked the same way.
    static const qtbus_arg c_args[] = {QTBUS_ARG_DOUBLE};
    CHECK_EQ(qtbus_signal_define(bus.c_bus(), "FromC", c_args, 1), QTBUS_OK);
    qtbus::signal<void(double)> ok(bus, "FromC");
    CHECK_THROWS(QTBUS_EINVAL, (qtbus::signal<void(float *)>(bus, "FromC")));
    CHECK_THROWS(QTBUS_EINVAL, (qtbus::signal<void()>(bus, std::string_view("a\0b", 3))));
    CHECK_THROWS(QTBUS_EINVAL, (qtbus::signal<void()>(bus, "")));
    // A signal on another bus is another signature.
    qtbus::bus other;
    qtbus::signal<void(std::string_view, int64_t)> elsewhere(other, "Login");
    CHECK_EQ(elsewhere("x", 1), 0);
}

static void a_slot_that_throws()
{
    qtbus::bus bus;
    qtbus::signal<void(int32_t)> sig(bus, "Throws");
    std::atomic<int> caught{0};
    qtbus::exception_handler previous = qtbus::set_exception_handler([&](std::exception_ptr e) {
        try {
            std::rethrow_exception(e);
        } catch (const std::runtime_error &r) {
            CHECK_EQ(std::string(r.what()), std::string("slot 3"));
            caught++;
        }
    });
    int after = 0;
    qtbus::subscription a = sig.connect([](int32_t v) { throw std::runtime_error("slot " + std::to_string(v)); });
    qtbus::subscription b = sig.connect([&] { after++; });
    CHECK_EQ(sig(3), 2);
    CHECK_EQ(caught.load(), 1);
    CHECK_EQ(after, 1); // the next slot still ran
    qtbus::set_exception_handler(previous);
}

static void re_entrant_emits()
{
    // Slots dispatching on their own type from inside an emit, depth-first: a nested
    // emit, and a plain dispatch of bytes that are not the signature's.  Each slot reads
    // the arguments of the event it was handed, never those of the emit around it.
    qtbus::bus bus;
    qtbus::signal<void(std::string_view, int32_t)> sig(bus, "Nested");
    std::vector<std::string> log;
    qtbus::subscription first = sig.connect([&](std::string_view s, int32_t depth) {
        log.push_back("first " + std::string(s) + " " + std::to_string(depth));
        if (depth == 0) {
            CHECK_EQ(bus.dispatch("Nested", "QTSG garbage, not a signal"), 3);
            CHECK_EQ(sig("inner", 1), 3);
        }
    });
    qtbus::subscription second =
        sig.connect([&](std::string s, int32_t depth) { log.push_back("second " + s + " " + std::to_string(depth)); });
    qtbus::subscription plain = bus.subscribe("Nested", [&](const qtbus::event &e) {
        qtbus_value v[QTBUS_SIGNAL_MAX_ARGS];
        log.push_back(qtbus_event_args(e.c_event(), v, QTBUS_SIGNAL_MAX_ARGS) < 0 ? "plain garbage" : "plain");
    });
    CHECK_EQ(sig("outer", 0), 3);
    const std::vector<std::string> expected = {"first outer 0", "plain garbage",  "first inner 1", "second inner 1",
                                               "plain",         "second outer 0", "plain"};
    CHECK_EQ(log.size(), expected.size());
    for (size_t i = 0; i < expected.size(); i++)
        CHECK_EQ(log[i], expected[i]);

    // A C emit inside a C++ emit, and the other way round.
    log.clear();
    qtbus::signal<void(const char *, int32_t)> c_side(bus, "Nested");
    qtbus::subscription third = c_side.connect([&](const char *s, int32_t depth) {
        if (depth == 5) CHECK_EQ(qtbus_signal_emit(bus.c_bus(), "Nested", nullptr, "from C", (int32_t)6), 4);
        log.push_back(std::string("third ") + s);
    });
    CHECK_EQ(sig("outer", 5), 4);
    const std::vector<std::string> mixed = {"first outer 5",   "second outer 5", "plain",        "first from C 6",
                                            "second from C 6", "plain",          "third from C", "third outer"};
    CHECK_EQ(log.size(), mixed.size());
    for (size_t i = 0; i < mixed.size(); i++)
        CHECK_EQ(log[i], mixed[i]);
}

static void two_threads_emit()
{
    qtbus::bus bus;
    qtbus::signal<void(std::string_view, uint64_t)> sig(bus, "Threads");
    std::atomic<uint64_t> sum{0}, calls{0};
    std::vector<qtbus::subscription> subs;
    for (int i = 0; i < 4; i++) {
        subs.push_back(sig.connect([&](std::string_view s, uint64_t v) {
            CHECK(s == "thread");
            sum += v;
            calls++;
        }));
    }
    constexpr uint64_t n = 20000;
    auto emitter = [&] {
        for (uint64_t i = 1; i <= n; i++)
            CHECK_EQ(sig("thread", i), 4);
    };
    std::thread t1(emitter), t2(emitter);
    t1.join();
    t2.join();
    CHECK_EQ(calls.load(), 2 * 4 * n);
    CHECK_EQ(sum.load(), 2 * 4 * (n * (n + 1) / 2));
}

int main()
{
    every_kind();
    strings_three_ways();
    the_slots_a_signal_takes();
    arities();
    options_apply();
    bytes_that_are_not_the_signatures();
    a_signature_the_bus_has();
    a_slot_that_throws();
    re_entrant_emits();
    two_threads_emit();
    std::printf("cxx_signal: ok\n");
    return 0;
}
