// SPDX-License-Identifier: MIT
// cxx_signal_c: C++'s typed signals and C's are one (CONTRACT section 11).  One
// emission from C++ (qtbus::signal::emit) reaches a C handler connected with
// qtbus_signal_connect and a plain C handler reading qtbus_event_args
// (cxx_signal_cpeer.c, compiled as C), beside a C++ slot; one from C
// (qtbus_signal_emit, qtbus_signal_emitv) reaches the C++ slot beside the C handlers.
// Swift's side of the same is Tests/QTEventBusTests/SignalTests.swift, whose test
// connects a C handler, a plain C handler, a C++ slot and a Swift subscriber to one
// type and emits once from each language; this test needs no Swift toolchain.
#include "cxx_signal_cpeer.h"
#include "cxx_util.hpp"

#include <string>

int main()
{
    qtbus::bus bus;
    // C defines the signature, C++ checks it: the slot's (std::string_view, int32_t,
    // double) is (STRING, INT32, DOUBLE).
    CHECK_EQ(cpeer_define(bus.c_bus(), "Quote"), QTBUS_OK);
    qtbus::signal<void(std::string_view, int32_t, double)> quote(bus, "Quote");
    CHECK_EQ(cpeer_connect(bus.c_bus(), "Quote"), QTBUS_OK);
    CHECK_EQ(cpeer_listen_args(bus.c_bus(), "Quote"), QTBUS_OK);
    qtbus::subscription s = quote.connect([](std::string_view text, int32_t number, double real) {
        cpeer_append("c++", std::string(text).c_str(), number, real);
    });

    const std::string all = "c-typed(%1)c-plain(%1)c++(%1)";
    auto expect = [&](const char *args) {
        std::string want = all;
        for (size_t at; (at = want.find("%1")) != std::string::npos;)
            want.replace(at, 2, args);
        std::string got = cpeer_log();
        for (size_t from = 0, end; (end = got.find(')', from)) != std::string::npos; from = end + 1)
            std::printf("signal delivery: %s\n", got.substr(from, end + 1 - from).c_str());
        CHECK_EQ(got, want);
        cpeer_reset();
    };

    CHECK_EQ(quote.emit("from C++", 1, 1.5), 3);
    expect("from C++,1,1.5");
    CHECK_EQ(quote.emit_subtype("sub", "from C++, a subtype", -2, 0.25), 3);
    expect("from C++, a subtype,-2,0.25");
    CHECK_EQ(cpeer_emit(bus.c_bus(), "Quote", NULL, "from C", 3, 2.5), 3);
    expect("from C,3,2.5");
    CHECK_EQ(cpeer_emitv(bus.c_bus(), "Quote", "v", "from C emitv", 4, -0.5), 3);
    expect("from C emitv,4,-0.5");
    // A NULL string from C: the C++ slot's std::string_view is empty.
    CHECK_EQ(cpeer_emit(bus.c_bus(), "Quote", NULL, NULL, 5, 0), 3);
    CHECK_EQ(std::string(cpeer_log()), std::string("c-typed(NULL,5,0)c-plain(NULL,5,0)c++(,5,0)"));
    cpeer_reset();
    // A C++ signal declared with a const char * emits NULL as C does.
    qtbus::signal<void(const char *, int32_t, double)> nullable(bus, "Quote");
    CHECK_EQ(nullable(nullptr, 6, 1), 3);
    CHECK_EQ(std::string(cpeer_log()), std::string("c-typed(NULL,6,1)c-plain(NULL,6,1)c++(,6,1)"));
    cpeer_reset();

    // The other way round: C++ defines, C connects and emits.
    qtbus::signal<void(std::string, int32_t, double)> cxx_first(bus, "CxxFirst");
    CHECK_EQ(cpeer_connect(bus.c_bus(), "CxxFirst"), QTBUS_OK);
    CHECK_EQ(cpeer_define(bus.c_bus(), "CxxFirst"), QTBUS_OK); // the same signature
    CHECK_EQ(cxx_first("same", 7, 7), 1);
    CHECK_EQ(std::string(cpeer_log()), std::string("c-typed(same,7,7)"));
    std::printf("cxx_signal_c: ok\n");
    return 0;
}
