// SPDX-License-Identifier: MIT
// cxx_signal_ports: the typed cases of Boost.Signals2's and libsigc++'s own test suites,
// written against qtbus::signal and qtbus::track (their untyped cases map onto
// bus.subscribe; these need typed arguments, slots that take fewer of them, or owner
// tracking).  Each case names the test it comes from.  What differs, by design:
//   - a qtbus slot returns nothing to the emitter (no combiners): a case that checks a
//     combined result collects each slot's result itself;
//   - a slot's parameters are the signal's argument types, without conversions: the
//     cases with a float slot on an int signal (sigc++'s test_signal.cc, bar(float)) or
//     a reference argument (Boost's test_reference_args, sigc++'s std::string&) do not
//     compile here, and are in signal_check.cpp;
//   - a slot whose owner is gone is disposed when the next emission reaches it, not at
//     the owner's death (qtbus cannot see a std::shared_ptr end); a subscriber count
//     taken between the two still counts it.
#include "cxx_util.hpp"

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

// Boost's max_or_default combiner, over the results the slots collected.
struct results {
    std::vector<int> values;
    int max_or_default()
    {
        const int r = values.empty() ? 0 : *std::max_element(values.begin(), values.end());
        values.clear();
        return r;
    }
};

// Boost.Signals2 signal_test.cpp, test_one_arg.
static void boost_one_arg()
{
    qtbus::bus bus;
    qtbus::signal<void(int32_t)> s1(bus, "OneArg");
    results r;
    qtbus::subscription a = s1.connect([&](int32_t v) { r.values.push_back(std::negate<int>()(v)); });
    qtbus::subscription b = s1.connect([&](int32_t v) { r.values.push_back(std::multiplies<int>()(2, v)); });
    // A standard function object connects as is (its result is dropped).
    qtbus::subscription c = s1.connect(std::negate<int32_t>());
    CHECK_EQ(s1(1), 3);
    CHECK_EQ(r.max_or_default(), 2);
    CHECK_EQ(s1(-1), 3);
    CHECK_EQ(r.max_or_default(), 1);
}

// Boost.Signals2 signal_test.cpp, test_signal_signal_connect: a signal connected to a
// signal.  Boost disconnects s2 from s1 when s2 is destroyed; here a signal is a handle
// (copied into the slot), so s2's lifetime is tracked explicitly.
static void boost_signal_signal_connect()
{
    qtbus::bus bus;
    qtbus::signal<void(int32_t)> s1(bus, "S1");
    results r;
    qtbus::subscription a = s1.connect([&](int32_t v) { r.values.push_back(-v); });
    CHECK_EQ(s1(3), 1);
    CHECK_EQ(r.max_or_default(), -3);
    {
        auto s2 = std::make_shared<qtbus::signal<void(int32_t)>>(bus, "S2");
        qtbus::subscription forward = s1.connect(qtbus::track(s2, *s2));
        forward.release(); // lives until s2 is gone and s1 next reaches it
        qtbus::subscription b = s2->connect([&](int32_t v) { r.values.push_back(2 * v); });
        qtbus::subscription c = s2->connect([&](int32_t v) { r.values.push_back(-3 * v); });
        CHECK_EQ((*s2)(-3), 2);
        CHECK_EQ(r.max_or_default(), 9);
        CHECK_EQ(s1(3), 2);
        CHECK_EQ(r.max_or_default(), 6);
    }                   // s2 goes out of scope
    CHECK_EQ(s1(3), 2); // the forwarding slot is reached, finds s2 gone, and ends
    CHECK_EQ(r.max_or_default(), -3);
    CHECK_EQ(s1(3), 1);
    CHECK_EQ(bus.subscriber_count("S1"), 1);
}

// Boost.Signals2 signal_test.cpp, test_extended_slot: a slot that disconnects itself
// (Boost passes the connection; here the slot disposes the subscription it belongs to).
static void boost_extended_slot()
{
    qtbus::bus bus;
    qtbus::signal<void(int32_t)> sig(bus, "Extended");
    qtbus::subscription self;
    int calls = 0;
    self = sig.connect([&](int32_t) {
        calls++;
        self.dispose();
    });
    CHECK_EQ(bus.subscriber_count("Extended"), 1);
    CHECK_EQ(sig(0), 1);
    CHECK_EQ(bus.subscriber_count("Extended"), 0);
    CHECK_EQ(sig(0), 0);
    CHECK_EQ(calls, 1);
}

// Boost.Signals2 track_test.cpp: swallow(const T *, int) bound to the tracked object.
struct swallow {
    template <class T>
    int operator()(const T *, int i)
    {
        return i;
    }
};
static int myfunc(int i, double z) { return z > 0 ? i : -i; }

static void boost_track()
{
    qtbus::bus bus;
    qtbus::signal<void(int32_t)> s1(bus, "Track");
    results r;
    CHECK_EQ(s1(5), 0);
    CHECK_EQ(r.max_or_default(), 0);

    // Test auto-disconnection.
    qtbus::subscription first;
    {
        auto shorty = std::make_shared<int>();
        first = s1.connect(
            qtbus::track(shorty, [&r, p = shorty.get()](int32_t i) { r.values.push_back(swallow()(p, i)); }));
        CHECK_EQ(s1(5), 1);
        CHECK_EQ(r.max_or_default(), 5);
    }
    CHECK_EQ(s1(5), 1);
    CHECK_EQ(r.max_or_default(), 0);
    CHECK(!first.active());

    // Test auto-disconnection of slot before signal connection.
    {
        auto shorty = std::make_shared<int>(1);
        auto slot = qtbus::track(shorty, [&r, p = shorty.get()](int32_t i) { r.values.push_back(swallow()(p, i)); });
        shorty.reset();
        qtbus::subscription c = s1.connect(std::move(slot));
        CHECK(!c.active()); // dead_slot_test.cpp: not connected
        CHECK_EQ(s1(5), 0);
        CHECK_EQ(r.max_or_default(), 0);
    }

    // Test binding of a slot to another slot: the outer slot tracks what the inner one
    // tracks.
    qtbus::subscription connection;
    {
        auto shorty = std::make_shared<int>(2);
        auto other_slot =
            qtbus::track(shorty, [&r, p = shorty.get()](int32_t i) { r.values.push_back(myfunc(*p, 0.5) + 0 * i); });
        auto other_owner = std::make_shared<int>(0);
        connection = s1.connect(qtbus::track(other_owner, std::move(other_slot)));
        CHECK_EQ(s1(3), 1);
        CHECK_EQ(r.max_or_default(), 2);
    }
    CHECK_EQ(s1(3), 1);
    CHECK(!connection.active());
    CHECK_EQ(s1(3), 0);
    CHECK_EQ(r.max_or_default(), 0);

    // Test binding of a signal as a slot.
    {
        auto s2 = std::make_shared<qtbus::signal<void(int32_t)>>(bus, "Track2");
        qtbus::subscription a = s1.connect(qtbus::track(s2, *s2));
        qtbus::subscription b = s2->connect([&](int32_t i) { r.values.push_back(myfunc(i, 0.7)); });
        CHECK_EQ(s1(4), 1);
        CHECK_EQ(r.max_or_default(), 4);
        a.release();
    }
    CHECK_EQ(s1(4), 1); // reached, ended
    CHECK_EQ(r.max_or_default(), 0);
    CHECK_EQ(bus.subscriber_count("Track"), 0);
}

// libsigc++ test_signal.cc: an empty signal, a function and a trackable's member
// connected, auto-disconnection when the trackable dies, and make_slot (a signal
// connected to a signal).
struct A {
    std::vector<std::string> *log;
    int foo(int i)
    {
        log->push_back("A::foo(int " + std::to_string(i) + ")");
        return 1;
    }
};
static std::vector<std::string> *foo_log;
static int foo(int i)
{
    foo_log->push_back("foo(int " + std::to_string(i) + ")");
    return 1;
}

static void sigc_signal()
{
    qtbus::bus bus;
    std::vector<std::string> log;
    foo_log = &log;
    qtbus::signal<void(int32_t)> sig(bus, "Sigc");
    CHECK_EQ(sig(0), 0); // emit an empty signal
    qtbus::subscription f = sig.connect(&foo);
    qtbus::subscription m;
    {
        auto a = std::make_shared<A>(A{&log});
        m = sig.connect(qtbus::track(a, [p = a.get()](int32_t i) { p->foo(i); }));
        CHECK_EQ(sig(1), 2);
        CHECK_EQ(bus.subscriber_count("Sigc"), 2);
    }                    // a dies
    CHECK_EQ(sig(2), 2); // reaches A's slot once more, which ends instead of running
    CHECK_EQ(bus.subscriber_count("Sigc"), 1);
    const std::vector<std::string> expected = {"foo(int 1)", "A::foo(int 1)", "foo(int 2)"};
    CHECK_EQ(log.size(), expected.size());
    for (size_t i = 0; i < expected.size(); i++)
        CHECK_EQ(log[i], expected[i]);

    // make_slot: sig2 forwards to sig.
    qtbus::signal<void(int32_t)> sig2(bus, "Sigc2");
    qtbus::subscription forward = sig2.connect(sig);
    CHECK_EQ(sig2(3), 1);
    CHECK_EQ(log.back(), std::string("foo(int 3)"));
}

// libsigc++ test_hide.cc: a functor called with fewer arguments than the signal has
// (hide<N> drops the trailing ones; a slot here takes the leading arguments it
// names).  foo has two call operators: the one taking the most leading arguments runs.
struct hide_foo {
    std::vector<int> *out;
    bool operator()()
    {
        out->push_back(-1);
        return true;
    }
    int operator()(int j)
    {
        out->push_back(1 + j);
        return 1 + j;
    }
};
struct hide_foo_void {
    int *calls;
    void operator()() { ++*calls; }
};

static void sigc_hide()
{
    qtbus::bus bus;
    std::vector<int> out;
    int void_calls = 0;
    qtbus::signal<void(int32_t, int32_t)> two(bus, "Hide2");
    qtbus::signal<void(int32_t)> one(bus, "Hide1");
    qtbus::subscription a = two.connect(hide_foo{&out});             // hide<1>(foo())(1, 2): foo(1)
    qtbus::subscription b = one.connect(hide_foo_void{&void_calls}); // hide<0>(foo_void())(1)
    CHECK_EQ(two(1, 2), 1);
    CHECK_EQ(one(1), 1);
    CHECK_EQ(out.size(), 1u);
    CHECK_EQ(out[0], 2);
    CHECK_EQ(void_calls, 1);
}

// libsigc++ test_trackable.cc: a slot of a trackable object's member is not called once
// the object is gone.
struct my_class {
    int i = 0;
    std::vector<int> *out;
    void foo() { out->push_back(i); }
};

static void sigc_trackable()
{
    qtbus::bus bus;
    std::vector<int> out;
    qtbus::signal<void()> sl(bus, "Trackable");
    qtbus::subscription s;
    {
        auto t = std::make_shared<my_class>();
        t->i = 10;
        t->out = &out;
        s = sl.connect(qtbus::track(t, [p = t.get()] { p->foo(); }));
        CHECK_EQ(sl(), 1);
    }
    CHECK_EQ(sl(), 1);
    CHECK_EQ(out.size(), 1u);
    CHECK_EQ(out[0], 10);
    CHECK(!s.active());
}

// libsigc++ test_track_obj.cc: track_obj(functor, objects...) with functors of one and
// two arguments and lambdas; the slot ends with any of its objects.
struct bar_group4 {};
struct book {
    std::string name;
};

static void sigc_track_obj()
{
    qtbus::bus bus;
    std::string result;
    auto functor1 = [&](int32_t i) { result += (i < 0) ? "negative" : ((i > 0) ? "positive" : "zero"); };
    qtbus::signal<void(int32_t)> sl(bus, "TrackObj1");
    {
        auto bar4 = std::make_shared<bar_group4>();
        qtbus::subscription s1 = sl.connect(qtbus::track(bar4, functor1));
        qtbus::subscription s2 = sl.connect(qtbus::track(bar4, functor1));
        s1.release();
        s2.release();
        CHECK_EQ(sl(-2), 2);
        CHECK_EQ(result, std::string("negativenegative"));
    } // auto-disconnect
    result.clear();
    sl(2);
    CHECK_EQ(result, std::string(""));
    CHECK_EQ(bus.subscriber_count("TrackObj1"), 0);

    // Two tracked objects: deleting the book disconnects.
    qtbus::signal<void(int32_t, std::string_view)> sl3(bus, "TrackObj2");
    auto bar4 = std::make_shared<bar_group4>();
    auto book4 = std::make_shared<book>(book{"A Book"});
    qtbus::subscription s3 =
        sl3.connect(qtbus::track(bar4, qtbus::track(book4, [&, b = book4.get()](int32_t i, std::string_view str) {
                                     result += (i < 0) ? "negative, " : ((i > 0) ? "positive, " : "zero, ");
                                     result += std::string(str) + b->name;
                                 })));
    CHECK_EQ(sl3(0, "Book title: "), 1);
    CHECK_EQ(result, std::string("zero, Book title: A Book"));
    book4.reset();
    result.clear();
    CHECK_EQ(sl3(1, "Title: "), 1);
    CHECK_EQ(result, std::string(""));
    CHECK(!s3.active());

    // A lambda that captures a tracked object by reference (the documentation's
    // example): it never runs once the object is gone.
    qtbus::signal<void()> some_signal(bus, "TrackObj3");
    {
        auto some_bar = std::make_shared<bar_group4>();
        qtbus::subscription s = some_signal.connect(qtbus::track(some_bar, [&, b = some_bar.get()] {
            (void)b;
            result += "foo_group4(bar_group4&)";
        }));
        s.release();
        some_signal();
        CHECK_EQ(result, std::string("foo_group4(bar_group4&)"));
    }
    result.clear();
    some_signal();
    CHECK_EQ(result, std::string(""));
}

int main()
{
    boost_one_arg();
    boost_signal_signal_connect();
    boost_extended_slot();
    boost_track();
    sigc_signal();
    sigc_hide();
    sigc_trackable();
    sigc_track_obj();
    std::printf("cxx_signal_ports: ok\n");
    return 0;
}
