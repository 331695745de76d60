/* The TCP car of kernel scenario 11: logs every line it receives with two CLOCK_MONOTONIC stamps.
 *
 *   tcpcar LOG PORT [PORT...]
 *
 * Listens on 127.0.0.1:PORT for each PORT (one per sender, so a line's port names who sent it),
 * reads every connection as soon as it is readable (epoll), acknowledges at once (TCP_QUICKACK),
 * sends nothing, and logs (nanoseconds, CLOCK_MONOTONIC, the clock the test stamps its uinput
 * writes with):
 *
 *   OFFSET <CLOCK_REALTIME - CLOCK_MONOTONIC> <uncertainty>     (at start, and OFFSET_END at exit)
 *   LISTEN <port>
 *   CONNECT <port> <time>
 *   RX <port> <receive time> <kernel arrival time> <last> <line>
 *   EOF <port> <time>
 *
 * <receive time> is read right after recvmsg(2) returned the line; <kernel arrival time> is the
 * SO_TIMESTAMPNS stamp of the newest segment that recvmsg read (on loopback: when the sender's
 * write went through the stack; CLOCK_REALTIME, converted with OFFSET), -1 without one. It is
 * exact for the last line a recvmsg completed (<last> = 1) and an upper bound for the others
 * (<last> = 0: several lines were waiting). The RX lines are buffered in memory and written out
 * after 200 ms without input and at exit (SIGTERM/SIGINT), so logging costs nothing while lines
 * arrive; the others are flushed at once (the test waits for LISTEN and CONNECT).
 * Built by run.sh on the host: gcc -O2 tcpcar.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_FDS 64

static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void)sig; stop = 1; }

static int64_t now_ns(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* CLOCK_REALTIME - CLOCK_MONOTONIC from the tightest of 50 bracketed reads; *width: that bracket. */
static int64_t realtime_offset(int64_t *width) {
    int64_t best = 0, best_width = INT64_MAX;
    for (int i = 0; i < 50; i++) {
        int64_t a = now_ns(CLOCK_MONOTONIC), r = now_ns(CLOCK_REALTIME), b = now_ns(CLOCK_MONOTONIC);
        if (b - a < best_width) { best_width = b - a; best = r - (a + (b - a) / 2); }
    }
    *width = best_width;
    return best;
}

struct conn { int port; char partial[1024]; size_t used; };

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: tcpcar LOG PORT [PORT...]\n"); return 2; }
    FILE *log = fopen(argv[1], "w");
    if (!log) { perror("tcpcar: log"); return 1; }
    size_t rx_size = 16 << 20, rx_used = 0;   /* the RX lines, written at exit */
    char *rx = malloc(rx_size);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    int64_t width, offset = realtime_offset(&width);
    fprintf(log, "OFFSET %lld %lld\n", (long long)offset, (long long)width);

    int ep = epoll_create1(EPOLL_CLOEXEC);
    static struct conn conns[MAX_FDS];
    static int listener_port[MAX_FDS];
    int one = 1;
    for (int i = 2; i < argc; i++) {
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in addr;
        memset(&addr, 0, sizeof addr);
        addr.sin_family = AF_INET;
        addr.sin_port = htons((unsigned short)atoi(argv[i]));
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        setsockopt(s, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);   /* turns the kernel's stamping on early */
        if (s < 0 || s >= MAX_FDS || bind(s, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(s, 4) < 0) {
            fprintf(stderr, "tcpcar: listen on port %s: %s\n", argv[i], strerror(errno));
            return 1;
        }
        listener_port[s] = atoi(argv[i]);
        struct epoll_event ev = { .events = EPOLLIN, .data.fd = s };
        epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev);
        fprintf(log, "LISTEN %d\n", listener_port[s]);
    }
    fflush(log);

    char buf[4096];
    char control[CMSG_SPACE(sizeof(struct timespec)) * 4];
    while (!stop) {
        struct epoll_event events[16];
        int n = epoll_wait(ep, events, 16, 200);
        if (n == 0 && rx_used) {   /* quiet for 200 ms: write the buffered RX lines out */
            fwrite(rx, 1, rx_used, log);
            fflush(log);
            rx_used = 0;
        }
        for (int i = 0; i < n; i++) {
            int fd = events[i].data.fd;
            if (listener_port[fd]) {
                int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
                if (c < 0) continue;
                if (c >= MAX_FDS) { close(c); continue; }
                setsockopt(c, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
                setsockopt(c, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
                conns[c].port = listener_port[fd];
                conns[c].used = 0;
                struct epoll_event ev = { .events = EPOLLIN, .data.fd = c };
                epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev);
                fprintf(log, "CONNECT %d %lld\n", conns[c].port, (long long)now_ns(CLOCK_MONOTONIC));
                fflush(log);
                continue;
            }
            struct iovec iov = { .iov_base = buf, .iov_len = sizeof buf };
            struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
                                  .msg_controllen = sizeof control };
            ssize_t got = recvmsg(fd, &msg, MSG_DONTWAIT);
            int64_t t_user = now_ns(CLOCK_MONOTONIC);
            if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
            if (got <= 0) {
                fprintf(log, "EOF %d %lld\n", conns[fd].port, (long long)t_user);
                fflush(log);
                epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
                close(fd);
                continue;
            }
            setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);   /* quick ACK is not sticky */
            int64_t t_kernel = -1;
            for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
                if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
                    struct timespec ts;
                    memcpy(&ts, CMSG_DATA(cm), sizeof ts);
                    t_kernel = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec - offset;
                }
            }
            struct conn *c = &conns[fd];
            /* the complete lines in this read; the last of them carries the exact kernel stamp */
            int complete = 0;
            for (ssize_t k = 0; k < got; k++) complete += buf[k] == '\n';
            for (ssize_t k = 0; k < got; k++) {
                char ch = buf[k];
                if (ch != '\n') {
                    if (c->used < sizeof c->partial - 1) c->partial[c->used++] = ch;
                    continue;
                }
                complete--;
                if (c->used && c->partial[c->used - 1] == '\r') c->used--;
                c->partial[c->used] = 0;
                if (rx_used + c->used + 96 < rx_size)
                    rx_used += (size_t)snprintf(rx + rx_used, rx_size - rx_used, "RX %d %lld %lld %d %s\n", c->port,
                                                (long long)t_user, (long long)t_kernel, complete == 0, c->partial);
                c->used = 0;
            }
        }
    }
    fwrite(rx, 1, rx_used, log);
    offset = realtime_offset(&width);
    fprintf(log, "OFFSET_END %lld %lld\n", (long long)offset, (long long)width);
    fclose(log);
    return 0;
}
