/* The nats-server both pairs go through: started on 127.0.0.1 on a free port, with
 * its log in a temporary directory, killed at exit (and with this process, if it dies
 * first: PR_SET_PDEATHSIG). */
#include "bench_nats.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pid_t server_pid;
static char url[64];

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) || getsockname(fd, (struct sockaddr *)&a, &len)) {
        perror("bench-nats: no free port");
        exit(1);
    }
    close(fd);
    return ntohs(a.sin_port);
}

static int accepts(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    int ok = connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
    close(fd);
    return ok;
}

const char *server_start(void)
{
    const char *program = access("/usr/sbin/nats-server", X_OK) == 0 ? "/usr/sbin/nats-server" : "nats-server";
    int port = free_port();
    char port_text[16];
    snprintf(port_text, sizeof port_text, "%d", port);
    server_pid = fork();
    if (server_pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        execlp(program, program, "-a", "127.0.0.1", "-p", port_text, "-l", "/dev/null", (char *)NULL);
        perror("bench-nats: nats-server");
        _exit(127);
    }
    for (int i = 0; i < 500 && !accepts(port); i++) {
        if (waitpid(server_pid, NULL, WNOHANG) == server_pid) break;
        struct timespec t = { 0, 10000000 };
        nanosleep(&t, NULL);
    }
    if (!accepts(port)) {
        fprintf(stderr, "bench-nats: nats-server did not start (Debian: apt-get install nats-server)\n");
        exit(1);
    }
    snprintf(url, sizeof url, "nats://127.0.0.1:%d", port);
    atexit(server_stop);
    return url;
}

void server_stop(void)
{
    if (server_pid <= 0) return;
    kill(server_pid, SIGKILL);
    waitpid(server_pid, NULL, 0);
    server_pid = 0;
}
