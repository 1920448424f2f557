// SPDX-License-Identifier: MIT
// lib_sigc.cpp -- libsigc++ 3: sigc::signal<void()>, handlers connected with
// sigc::ptr_fun, sigc::connection::disconnect().  Not thread-safe: it sits out the
// two-thread case.  And a typed signal of (const char *, int32_t) for case_signals.c.
#include "lib_signals.hpp"

#include <sigc++/sigc++.h>

#include <vector>

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

extern "C" const bench_lib bench_sigc = SignalAdapter<SigcTraits>::make("sigc", "libsigc++", 0, sigc_version);

// The typed signal case: sigc::signal<void(const char *, int32_t)>, slots connected
// with sigc::ptr_fun(&h_slot).
namespace {
struct SigcSig {
    sigc::signal<void(const char *, int32_t)> sig;
    std::vector<sigc::connection> conns;
};

void *sigc_sig_create(std::size_t handlers)
{
    SigcSig *s = new SigcSig;
    for (std::size_t i = 0; i < handlers; i++)
        s->conns.push_back(s->sig.connect(sigc::ptr_fun(&h_slot)));
    return s;
}

std::uint64_t sigc_sig_emit(void *p, std::uint64_t n)
{
    SigcSig *s = static_cast<SigcSig *>(p);
    for (std::uint64_t i = 0; i < n; i++)
        s->sig.emit("alice", static_cast<std::int32_t>(i));
    return 0;
}

void sigc_sig_destroy(void *p) { delete static_cast<SigcSig *>(p); }
} // namespace

extern "C" const bench_sig_impl bench_sig_sigc = {sigc_sig_create, sigc_sig_emit, sigc_sig_destroy};

extern "C" const char *bench_cxx_compiler(void)
{
#ifdef __clang__
    return "clang++ " __clang_version__;
#else
    return "g++ " __VERSION__;
#endif
}
