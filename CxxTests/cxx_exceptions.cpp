// SPDX-License-Identifier: MIT
// cxx_exceptions: an exception that escapes a callable never crosses into the library.
// It reaches qtbus::set_exception_handler's function, on the thread that threw, and the
// library goes on working (releases run, later dispatches deliver); with no handler set
// the process ends with std::terminate (checked in a child process).
#include "cxx_util.hpp"

#include <csignal>
#include <stdexcept>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

static std::atomic<int> routed{0};
static std::string last;

// The default handler, in a process of its own (re-executed with this argument).
static int unhandled()
{
    qtbus::bus b;
    auto s = b.subscribe("E", [] { throw std::runtime_error("unhandled"); });
    b.dispatch("E");
    return 0; // not reached: std::terminate
}

int main(int argc, char **argv)
{
    if (argc > 1 && std::string(argv[1]) == "--unhandled") return unhandled();
    qtbus::set_exception_handler([](std::exception_ptr p) {
        try {
            std::rethrow_exception(p);
        } catch (const std::exception &e) {
            last = e.what();
        } catch (int) {
            last = "int";
        }
        routed++;
    });
    qtbus::bus bus;
    int after = 0;
    {
        auto thrower = bus.subscribe("E", [c = counted()] { throw std::runtime_error("handler"); });
        auto next = bus.subscribe("E", [&] { after++; });
        CHECK_EQ(bus.dispatch("E"), 2); // the next handler still runs
        CHECK_EQ(routed.load(), 1);
        CHECK_EQ(last, std::string("handler"));
        CHECK_EQ(after, 1);
    }
    // The release hooks ran: the dispatch section was left normally.
    CHECK_EQ(counted::live.load(), 0);

    // Any type, from every kind of callable.
    auto a = bus.subscribe("Ask", [](const qtbus::event &e) { e.reply("r"); });
    bus.request(
        "Ask", "", [](const qtbus::event &) { throw 42; }, [] { throw std::logic_error("complete"); });
    CHECK_EQ(routed.load(), 3);
    CHECK_EQ(last, std::string("complete"));
    auto cmd = bus.command("c", [](qtbus::execution x) {
        x.finish();
        throw std::runtime_error("execute");
    });
    CHECK(cmd.execute()); // it ran: what it threw was routed, not a refusal
    CHECK_EQ(last, std::string("execute"));
    auto src = bus.source(
        "S", [](qtbus::bus_ref) { throw std::runtime_error("start"); }, [] { throw std::runtime_error("stop"); });
    src.connect();
    CHECK_EQ(last, std::string("start"));
    src.disconnect();
    CHECK_EQ(last, std::string("stop"));
    CHECK_EQ(routed.load(), 6);

    // On a queue thread: routed there.
    qtbus::queue q("exc");
    qtbus::options on_q;
    on_q.on = &q;
    auto qs = bus.subscribe("Q", on_q, [] { throw std::runtime_error("queued"); });
    bus.dispatch("Q");
    wait_until([] { return routed.load() == 7; });

    // Still working after all that.
    int ok = 0;
    auto fine = bus.subscribe("Fine", [&] { ok++; });
    bus.dispatch("Fine");
    CHECK_EQ(ok, 1);

    // The default: std::terminate (SIGABRT), in a new process: this one has threads.
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        setenv("SWIFT_BACKTRACE", "enable=no", 1);
        execl("/proc/self/exe", argv[0], "--unhandled", (char *)nullptr);
        _exit(127);
    }
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
    std::puts("cxx_exceptions: passed");
    return 0;
}
