// SPDX-License-Identifier: MIT
// lib_boost.cpp -- Boost.Signals2: boost::signals2::signal<void()> (its default, thread-
// safe mutex policy), handlers connected as function pointers,
// boost::signals2::connection::disconnect().
#include "lib_signals.hpp"

#include <boost/signals2/signal.hpp>
#include <boost/version.hpp>
#include <cstdio>

namespace {
struct BoostTraits {
    using signal_type = boost::signals2::signal<void()>;
    using connection_type = boost::signals2::connection;
    static connection_type connect(signal_type &sig) { return sig.connect(&h_void); }
};

const char *boost_version()
{
    static char v[32];
    std::snprintf(v, sizeof v, "%d.%d.%d", BOOST_VERSION / 100000, BOOST_VERSION / 100 % 1000,
                  BOOST_VERSION % 100);
    return v;
}
} // namespace

extern "C" const bench_lib bench_boost =
    SignalAdapter<BoostTraits>::make("boost", "Boost.Signals2", 1, boost_version);
