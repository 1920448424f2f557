/*
 * nats_server.h -- a real nats-server for the bridge's tests: started on 127.0.0.1 on a
 * free port with its own temporary store directory, stopped (and the directory
 * removed) by the test.  NATS_SERVER is the program's path (CMake finds it).
 *
 *   ns_server s;  ns_start(&s);  ... s.url ...  ns_stop(&s);
 *   ns_kill(&s) / ns_restart(&s): the server dies / comes back on the same port.
 *   ns_cluster_start(nodes, 3): a cluster of three on loopback (routes between all). 
 */
#ifndef QTBUS_NS_SERVER_H
#define QTBUS_NS_SERVER_H

#include "../test_util.h"

#include <arpa/inet.h>
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
    int no_jetstream;              /* set before ns_start: a server without JetStream */
    /* Cluster members only: */
    int cluster_port;
    char routes[256];
} ns_server;

/* A port nobody listens on now (the kernel's pick for an ephemeral bind). */
static inline int ns_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || getsockname(fd, (struct sockaddr *)&a, &len) != 0)
        tu_fail(__FILE__, __LINE__, "no free port");
    close(fd);
    return ntohs(a.sin_port);
}

static inline int ns_accepts(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    int ok = connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
    close(fd);
    return ok;
}

static inline void ns_spawn(ns_server *s)
{
    char port[16];
    snprintf(port, sizeof port, "%d", s->port);
    s->pid = fork();
    if (s->pid < 0) tu_fail(__FILE__, __LINE__, "fork");
    if (s->pid == 0) {
        /* A test that fails ends with _Exit: the server goes with it. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        /* Quiet unless the test fails: its log goes to the store directory. */
        char log[96];
        snprintf(log, sizeof log, "%s/server.log", s->dir);
        if (s->cluster_port) {
            /* JetStream stays off: clustered JetStream is another setup. */
            char cluster[64];
            snprintf(cluster, sizeof cluster, "nats://127.0.0.1:%d", s->cluster_port);
            execl(NATS_SERVER, NATS_SERVER, "-a", "127.0.0.1", "-p", port, "-l", log, "--cluster_name", "qtbus",
                  "--cluster", cluster, "--routes", s->routes, (char *)NULL);
        } else if (s->no_jetstream) {
            execl(NATS_SERVER, NATS_SERVER, "-a", "127.0.0.1", "-p", port, "-l", log, (char *)NULL);
        } else {
            execl(NATS_SERVER, NATS_SERVER, "-a", "127.0.0.1", "-p", port, "-js", "-sd", s->dir, "-l", log,
                  (char *)NULL);
        }
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
    for (int i = 0; i < count; i++) ns_spawn(&nodes[i]);
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

static inline void ns_stop(ns_server *s)
{
    ns_kill(s);
    char cmd[96];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", s->dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", s->dir);
}

#endif
