/* SPDX-License-Identifier: MIT */
/*
 * nats_server.h -- a real nats-server for the bridge's tests: started on 127.0.0.1 on a
 * free port with its own temporary store directory, stopped (and the directory
 * removed) by the test.  NATS_SERVER is the program's path (CMake finds it).
 *
 *   ns_server s;  ns_start(&s);  ... s.url ...  ns_stop(&s);
 *   ns_kill(&s) / ns_restart(&s): the server dies / comes back on the same port.
 *   ns_cluster_start(nodes, 3): a cluster of three on loopback (routes between all).
 *   s.config = "authorization { ... }" before ns_start: a server with that configuration
 *   file (-c), written to its store directory; the command line's settings come after.
 *   ns_reconfigure(&s, text): that file rewritten, and the running server reloads it.
 *   ns_client(PLAIN_CLIENT, 3, a, b, c): a Python NATS client of this folder run with
 *   PYTHON3, its output read by the test; ns_client_exit(f, "plain client") prints
 *   what it has not read and checks it exited with 0.
 */
#ifndef QTBUS_NS_SERVER_H
#define QTBUS_NS_SERVER_H

#include "../test_util.h"

#include <qtbus_nats.h>

#include <arpa/inet.h>
#include <stdarg.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct ns_server {
    pid_t pid;
    int port;
    char dir[64];
    char url[64];
    int no_jetstream;   /* set before ns_start: a server without JetStream */
    const char *config; /* set before ns_start: a configuration file's text, or NULL */
    /* Cluster members only: */
    int cluster_port;
    char routes[256];
} ns_server;

/* A port nobody listens on now (the kernel's pick for an ephemeral bind). */
static inline int ns_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || getsockname(fd, (struct sockaddr *)&a, &len) != 0)
        tu_fail(__FILE__, __LINE__, "no free port");
    close(fd);
    return ntohs(a.sin_port);
}

static inline int ns_accepts(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {
        .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int ok = connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
    close(fd);
    return ok;
}

static inline void ns_write_config(const ns_server *s, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(s->config, f) < 0 || fclose(f) != 0) tu_fail(__FILE__, __LINE__, "writing server.conf");
}

static inline void ns_spawn(ns_server *s)
{
    char port[16], conf[96];
    snprintf(port, sizeof port, "%d", s->port);
    snprintf(conf, sizeof conf, "%s/server.conf", s->dir);
    if (s->config) ns_write_config(s, conf);
    s->pid = fork();
    if (s->pid < 0) tu_fail(__FILE__, __LINE__, "fork");
    if (s->pid == 0) {
        /* A test that fails ends with _Exit: the server goes with it. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        /* Quiet unless the test fails: its log goes to the store directory. */
        char log[96];
        snprintf(log, sizeof log, "%s/server.log", s->dir);
        const char *argv[24];
        int n = 0;
        argv[n++] = NATS_SERVER;
        if (s->config) {
            argv[n++] = "-c";
            argv[n++] = conf;
        }
        const char *common[] = {"-a", "127.0.0.1", "-p", port, "-l", log};
        for (size_t i = 0; i < sizeof common / sizeof common[0]; i++)
            argv[n++] = common[i];
        char cluster[64];
        if (s->cluster_port) {
            /* JetStream stays off: clustered JetStream is another setup. */
            snprintf(cluster, sizeof cluster, "nats://127.0.0.1:%d", s->cluster_port);
            const char *more[] = {"--cluster_name", "qtbus", "--cluster", cluster, "--routes", s->routes};
            for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
                argv[n++] = more[i];
        } else if (!s->no_jetstream) {
            argv[n++] = "-js";
            argv[n++] = "-sd";
            argv[n++] = s->dir;
        }
        argv[n] = NULL;
        execv(NATS_SERVER, (char *const *)argv);
        _exit(127);
    }
    int64_t until = tu_now_ms() + TU_WAIT_MS;
    while (!ns_accepts(s->port)) {
        int status;
        if (waitpid(s->pid, &status, WNOHANG) == s->pid) tu_fail(__FILE__, __LINE__, "nats-server exited at start");
        if (tu_now_ms() > until) tu_fail(__FILE__, __LINE__, "nats-server did not listen within 10 s");
        tu_sleep_ms(10);
    }
}

static inline void ns_prepare(ns_server *s)
{
    snprintf(s->dir, sizeof s->dir, "/tmp/qtbus-nats-XXXXXX");
    if (!mkdtemp(s->dir)) tu_fail(__FILE__, __LINE__, "mkdtemp");
    s->port = ns_free_port();
    snprintf(s->url, sizeof s->url, "nats://127.0.0.1:%d", s->port);
}

static inline void ns_start(ns_server *s)
{
    ns_prepare(s);
    ns_spawn(s);
}

/* `count` servers, each routed to all the others. */
static inline void ns_cluster_start(ns_server *nodes, int count)
{
    for (int i = 0; i < count; i++) {
        ns_prepare(&nodes[i]);
        nodes[i].cluster_port = ns_free_port();
    }
    for (int i = 0; i < count; i++) {
        size_t n = 0;
        nodes[i].routes[0] = '\0';
        for (int j = 0; j < count; j++) {
            if (j == i) continue;
            n += (size_t)snprintf(nodes[i].routes + n, sizeof nodes[i].routes - n, "%snats://127.0.0.1:%d",
                                  n ? "," : "", nodes[j].cluster_port);
        }
    }
    for (int i = 0; i < count; i++)
        ns_spawn(&nodes[i]);
}

/* SIGKILL: no goodbye to the clients, as a crash or a lost machine. */
static inline void ns_kill(ns_server *s)
{
    if (s->pid <= 0) return;
    kill(s->pid, SIGKILL);
    waitpid(s->pid, NULL, 0);
    s->pid = 0;
}

static inline void ns_restart(ns_server *s) { ns_spawn(s); }

/* A bridge from `bus` to server `s` (request_timeout_ms 0: the default; jetstream 1:
 * sticky events in a JetStream stream); the connection must succeed. */
static inline qtbus_nats *ns_bridge(const ns_server *s, qtbus_bus *bus, int request_timeout_ms, int jetstream)
{
    qtbus_nats *bridge = NULL;
    qtbus_nats_options o = {.url = s->url, .request_timeout_ms = request_timeout_ms, .jetstream = jetstream};
    CHECK_EQ_INT(qtbus_nats_connect(bus, &o, &bridge), QTBUS_OK);
    CHECK(bridge != NULL);
    return bridge;
}

/* Counts the lines of the server's log that contain `text`. */
static inline int ns_log_count(const ns_server *s, const char *text)
{
    char path[96], line[1024];
    snprintf(path, sizeof path, "%s/server.log", s->dir);
    FILE *f = fopen(path, "r");
    int n = 0;
    while (f && fgets(line, sizeof line, f))
        n += strstr(line, text) != NULL;
    if (f) fclose(f);
    return n;
}

/* A server started with s.config: its file rewritten to `config`, then reloaded
 * (SIGHUP), returning once the server's log says it has. */
static inline void ns_reconfigure(ns_server *s, const char *config)
{
    char conf[96];
    snprintf(conf, sizeof conf, "%s/server.conf", s->dir);
    int before = ns_log_count(s, "Reloaded server configuration");
    s->config = config;
    ns_write_config(s, conf);
    kill(s->pid, SIGHUP);
    int64_t until = tu_now_ms() + TU_WAIT_MS;
    while (ns_log_count(s, "Reloaded server configuration") == before) {
        if (tu_now_ms() > until) tu_fail(__FILE__, __LINE__, "nats-server did not reload its configuration");
        tu_sleep_ms(10);
    }
}

static inline void ns_stop(ns_server *s)
{
    ns_kill(s);
    char cmd[96];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", s->dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", s->dir);
}

#ifdef PYTHON3 /* CTests' CMake defines it for the bridge's tests; CxxTests have no Python */
/* `script` (a Python NATS client: plain_client.py, traced_client.py) run with PYTHON3
 * and the argc arguments that follow, each quoted for the shell; read its output. */
static inline FILE *ns_client(const char *script, int argc, ...)
{
    char command[2048];
    size_t n = (size_t)snprintf(command, sizeof command, "'%s' '%s'", PYTHON3, script);
    va_list args;
    va_start(args, argc);
    for (int i = 0; i < argc; i++)
        n += (size_t)snprintf(command + n, sizeof command - n, " '%s'", va_arg(args, const char *));
    va_end(args);
    FILE *f = popen(command, "r");
    CHECK_MSG(f != NULL, "popen %s", command);
    return f;
}

/* Prints what the client wrote that the test did not read, as `who`'s, and checks
 * that it exited with 0. */
static inline void ns_client_exit(FILE *f, const char *who)
{
    char rest[1024];
    while (fgets(rest, sizeof rest, f))
        printf("%s (more): %s", who, rest);
    CHECK_EQ_INT(pclose(f), 0);
}
#endif

#endif
