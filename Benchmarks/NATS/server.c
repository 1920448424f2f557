/* SPDX-License-Identifier: MIT */
/* The nats-server both pairs go through: on 127.0.0.1, on a port the kernel says is
 * free, killed at exit, and with this process if it dies first (PR_SET_PDEATHSIG), so
 * that no run leaves a server behind. */
#include "bench_nats.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pid_t server_pid;
static char url[64];
static char version[64] = "?";

static const char *program(void)
{
    return access("/usr/sbin/nats-server", X_OK) == 0 ? "/usr/sbin/nats-server" : "nats-server";
}

/* A port nothing listens on now: the kernel's pick for port 0.  Another process could
 * take it before the server binds it; the server would then exit, which is caught
 * below. */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        perror("bench-nats: no free port on 127.0.0.1");
        exit(1);
    }
    close(fd);
    return ntohs(a.sin_port);
}

static bool accepts(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return false;
    struct sockaddr_in a = {
        .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    bool ok = connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
    close(fd);
    return ok;
}

static void server_stop(void)
{
    if (server_pid <= 0) return;
    kill(server_pid, SIGKILL);
    waitpid(server_pid, NULL, 0);
    server_pid = 0;
}

static void read_version(void)
{
    char command[128];
    snprintf(command, sizeof command, "%s --version 2>&1", program());
    FILE *p = popen(command, "r");
    if (!p) return;
    if (fgets(version, sizeof version, p)) {
        version[strcspn(version, "\n")] = '\0';
    } else {
        snprintf(version, sizeof version, "?");
    }
    pclose(p);
}

const char *server_start(void)
{
    read_version();
    int port = free_port();
    char port_text[16];
    snprintf(port_text, sizeof port_text, "%d", port);
    pid_t parent = getpid();
    server_pid = fork();
    if (server_pid < 0) {
        perror("bench-nats: fork");
        exit(1);
    }
    if (server_pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(1); /* the parent died before prctl */
        execlp(program(), program(), "-a", "127.0.0.1", "-p", port_text, "-l", "/dev/null", (char *)NULL);
        perror("bench-nats: nats-server");
        _exit(127);
    }
    atexit(server_stop);
    /* Up to 5 s for it to listen; an exit meanwhile (no binary, the port taken) ends
     * the wait at once. */
    for (int i = 0; i < 500 && !accepts(port); i++) {
        if (waitpid(server_pid, NULL, WNOHANG) == server_pid) {
            server_pid = 0;
            break;
        }
        struct timespec t = {0, 10 * 1000 * 1000};
        nanosleep(&t, NULL);
    }
    if (server_pid == 0 || !accepts(port)) {
        fprintf(stderr, "bench-nats: nats-server did not start on 127.0.0.1:%d (Debian: apt-get install nats-server)\n",
                port);
        exit(1);
    }
    snprintf(url, sizeof url, "nats://127.0.0.1:%d", port);
    return url;
}

const char *server_version(void) { return version; }

int64_t server_cpu_ns(void)
{
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)server_pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    /* utime and stime are fields 14 and 15, counted after the command's ")" (the
     * command may hold spaces). */
    const char *p = strrchr(text, ')');
    unsigned long long utime = 0, stime = 0;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2) return 0;
    return (int64_t)(utime + stime) * (1000000000 / sysconf(_SC_CLK_TCK));
}
