// SPDX-License-Identifier: MIT
// lib_boost.cpp -- Boost.Signals2: boost::signals2::signal<void()> (its default, thread-
// safe mutex policy), handlers connected as function pointers,
// boost::signals2::connection::disconnect(); and a typed signal of (const char *,
// int32_t) for case_signals.c.
#include "lib_signals.hpp"

#include <boost/signals2/signal.hpp>
#include <boost/version.hpp>
#include <cstdio>
#include <vector>

namespace {
struct BoostTraits {
    using signal_type = boost::signals2::signal<void()>;
    using connection_type = boost::signals2::connection;
    static connection_type connect(signal_type &sig) { return sig.connect(&h_void); }
};

const char *boost_version()
{
    static char v[32];
    std::snprintf(v, sizeof v, "%d.%d.%d", BOOST_VERSION / 100000, BOOST_VERSION / 100 % 1000, BOOST_VERSION % 100);
    return v;
}
} // namespace

extern "C" const bench_lib bench_boost = SignalAdapter<BoostTraits>::make("boost", "Boost.Signals2", 1, boost_version);

// The typed signal case: boost::signals2::signal<void(const char *, int32_t)>, slots
// connected as the function pointer h_slot.
namespace {
struct BoostSig {
    boost::signals2::signal<void(const char *, int32_t)> sig;
    std::vector<boost::signals2::connection> conns;
};

void *boost_sig_create(std::size_t handlers)
{
    BoostSig *s = new BoostSig;
    for (std::size_t i = 0; i < handlers; i++)
        s->conns.push_back(s->sig.connect(&h_slot));
    return s;
}

std::uint64_t boost_sig_emit(void *p, std::uint64_t n)
{
    BoostSig *s = static_cast<BoostSig *>(p);
    for (std::uint64_t i = 0; i < n; i++)
        s->sig("alice", static_cast<std::int32_t>(i));
    return 0;
}

void boost_sig_destroy(void *p) { delete static_cast<BoostSig *>(p); }
} // namespace

extern "C" const bench_sig_impl bench_sig_boost = {boost_sig_create, boost_sig_emit, boost_sig_destroy};
