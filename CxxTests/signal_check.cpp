// SPDX-License-Identifier: MIT
// signal_check.cpp -- what qtbus::signal refuses to compile (static_assert_check.cmake,
// run by ctest): compiled as is, it must compile (the control: every slot and argument
// type below that is allowed); with -DQTBUS_FAIL_<CASE>, the line marked `// fail:
// <CASE>` must fail with qtbus.hpp's static_assert, whose message names what is
// allowed.  The cases include those of Boost.Signals2's and libsigc++'s suites that
// compile there by conversion or by reference and not here (cxx_signal_ports.cpp).
#include <qtbus.hpp>

#include <memory>
#include <string>
#include <vector>

static void bar(float) {}           // libsigc++ test_signal.cc: a float slot on an int signal
static void increment_arg(int &) {} // Boost.Signals2 signal_test.cpp, test_reference_args

int main()
{
    qtbus::bus bus;
    qtbus::signal<void(int32_t, std::string_view)> sig(bus, "Checked");
    auto owner = std::make_shared<int>(0);
    // The control: what is allowed.
    qtbus::subscription ok1 = sig.connect([](int32_t, std::string_view) {});
    qtbus::subscription ok2 = sig.connect([](const int32_t &, const std::string &) {});
    qtbus::subscription ok3 = sig.connect([](int32_t) {});
    qtbus::subscription ok4 = sig.connect(qtbus::track(owner, [](auto, auto) {}));
    qtbus::signal<void(int *, const char *)> pointers(bus, "Pointers");
    qtbus::subscription ok5 = pointers.connect([](const int *, std::string) {});

#if defined(QTBUS_FAIL_SLOT_WRONG_TYPE)
    qtbus::subscription s = sig.connect([](double, std::string_view) {}); // fail: SLOT_WRONG_TYPE
#elif defined(QTBUS_FAIL_SLOT_SWAPPED)
    qtbus::subscription s = sig.connect([](std::string_view, int32_t) {}); // fail: SLOT_SWAPPED
#elif defined(QTBUS_FAIL_SLOT_WIDER)
    qtbus::subscription s = sig.connect([](int64_t, std::string_view) {}); // fail: SLOT_WIDER
#elif defined(QTBUS_FAIL_SLOT_TOO_MANY)
    qtbus::subscription s = sig.connect([](int32_t, std::string_view, int32_t) {}); // fail: SLOT_TOO_MANY
#elif defined(QTBUS_FAIL_SLOT_FLOAT)
    qtbus::signal<void(int32_t)> ints(bus, "Ints");
    qtbus::subscription s = ints.connect(&bar); // fail: SLOT_FLOAT
#elif defined(QTBUS_FAIL_SLOT_REFERENCE)
    qtbus::signal<void(int32_t)> ints(bus, "Ints");
    qtbus::subscription s = ints.connect(&increment_arg); // fail: SLOT_REFERENCE
#elif defined(QTBUS_FAIL_SLOT_POINTER)
    qtbus::subscription s = pointers.connect([](long *) {}); // fail: SLOT_POINTER
#elif defined(QTBUS_FAIL_SLOT_TRACKED)
    qtbus::subscription s = sig.connect(qtbus::track(owner, [](std::string_view) {})); // fail: SLOT_TRACKED
#elif defined(QTBUS_FAIL_ARG_FLOAT)
    qtbus::signal<void(float)> f(bus, "Float"); // fail: ARG_FLOAT
#elif defined(QTBUS_FAIL_ARG_REFERENCE)
    qtbus::signal<void(int &)> r(bus, "Reference"); // fail: ARG_REFERENCE
#elif defined(QTBUS_FAIL_ARG_CHAR_POINTER)
    qtbus::signal<void(char *)> c(bus, "Chars"); // fail: ARG_CHAR_POINTER
#elif defined(QTBUS_FAIL_ARG_BOOL)
    qtbus::signal<void(int32_t, bool)> b(bus, "Bool"); // fail: ARG_BOOL
#elif defined(QTBUS_FAIL_ARG_CLASS)
    qtbus::signal<void(std::vector<int>)> v(bus, "Vector"); // fail: ARG_CLASS
#endif
    (void)bar;
    (void)increment_arg;
    return 0;
}
