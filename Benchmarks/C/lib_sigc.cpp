// SPDX-License-Identifier: MIT
// lib_sigc.cpp -- libsigc++ 3: sigc::signal<void()>, handlers connected with
// sigc::ptr_fun, sigc::connection::disconnect().  Not thread-safe: it sits out the
// two-thread case.
#include "lib_signals.hpp"

#include <sigc++/sigc++.h>

namespace {
struct SigcTraits {
    using signal_type = sigc::signal<void()>;
    using connection_type = sigc::connection;
    static connection_type connect(signal_type &sig) { return sig.connect(sigc::ptr_fun(&h_void)); }
};

const char *sigc_version()
{
#define BENCH_STR2(x) #x
#define BENCH_STR(x) BENCH_STR2(x)
    return BENCH_STR(SIGCXX_MAJOR_VERSION) "." BENCH_STR(SIGCXX_MINOR_VERSION) "." BENCH_STR(SIGCXX_MICRO_VERSION);
}
} // namespace

extern "C" const bench_lib bench_sigc =
    SignalAdapter<SigcTraits>::make("sigc", "libsigc++", 0, sigc_version);

extern "C" const char *bench_cxx_compiler(void)
{
#ifdef __clang__
    return "clang++ " __clang_version__;
#else
    return "g++ " __VERSION__;
#endif
}
