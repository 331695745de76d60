/* The reference reader of kernel scenario 11: the least a program can do for carbridge's job.
 *
 *   refreader DEVICE HOST PORT
 *
 * Opens the evdev node DEVICE with libevdev (evdev delivers every event to every client that has
 * the node open, so carbridge and this program read the same stream), connects to HOST:PORT over
 * TCP (TCP_NODELAY, like carbridge's TCP link) and writes one line "A,<code>,<value>\n" for each
 * input report (SYN_REPORT) that changed an absolute axis (the last one the report changed), at
 * once, with a single write(2). Built by run.sh on the
 * host: gcc -O2 refreader.c $(pkg-config --cflags --libs libevdev).
 *
 * Prints "refreader: ready ..." on stdout once the device is open and the connection is up, and on
 * SIGTERM/SIGINT (or when the device goes away) a summary line on stderr, then exits 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <libevdev/libevdev.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void)sig; stop = 1; }

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: refreader DEVICE HOST PORT\n");
        return 2;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;   /* no SA_RESTART: poll(2) returns EINTR */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    int fd = open(argv[1], O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) { fprintf(stderr, "refreader: open %s: %s\n", argv[1], strerror(errno)); return 1; }
    struct libevdev *dev = NULL;
    int rc = libevdev_new_from_fd(fd, &dev);
    if (rc < 0) { fprintf(stderr, "refreader: libevdev_new_from_fd: %s\n", strerror(-rc)); return 1; }

    int sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((unsigned short)atoi(argv[3]));
    if (sock < 0 || inet_pton(AF_INET, argv[2], &addr.sin_addr) != 1 ||
        connect(sock, (struct sockaddr *)&addr, sizeof addr) < 0) {
        fprintf(stderr, "refreader: connect %s:%s: %s\n", argv[2], argv[3], strerror(errno));
        return 1;
    }
    int one = 1;
    setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    printf("refreader: ready: %s \"%s\" -> %s:%s\n", argv[1], libevdev_get_name(dev), argv[2], argv[3]);
    fflush(stdout);

    long events = 0, lines = 0, dropped = 0, write_errors = 0;
    int pending = 0, code = 0, value = 0;
    struct pollfd pfd = { .fd = fd, .events = POLLIN };
    while (!stop) {
        if (poll(&pfd, 1, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (pfd.revents & (POLLERR | POLLHUP | POLLNVAL)) break;
        struct input_event ev;
        unsigned flag = LIBEVDEV_READ_FLAG_NORMAL;
        for (;;) {
            rc = libevdev_next_event(dev, flag, &ev);
            if (rc == LIBEVDEV_READ_STATUS_SYNC) {   /* SYN_DROPPED: resync, then carry on */
                if (flag == LIBEVDEV_READ_FLAG_NORMAL) dropped++;
                flag = LIBEVDEV_READ_FLAG_SYNC;
                continue;
            }
            if (rc == -EAGAIN && flag == LIBEVDEV_READ_FLAG_SYNC) { flag = LIBEVDEV_READ_FLAG_NORMAL; continue; }
            if (rc != LIBEVDEV_READ_STATUS_SUCCESS) break;
            events++;
            if (ev.type == EV_ABS) {
                pending = 1;
                code = ev.code;
                value = ev.value;
            } else if (ev.type == EV_SYN && ev.code == SYN_REPORT && pending) {
                char line[32];
                int n = snprintf(line, sizeof line, "A,%d,%d\n", code, value);
                if (write(sock, line, (size_t)n) == n) lines++; else write_errors++;
                pending = 0;
            }
        }
        if (rc == -ENODEV) break;
    }
    fprintf(stderr, "refreader: events %ld lines %ld syn_dropped %ld write_errors %ld\n", events, lines, dropped,
            write_errors);
    libevdev_free(dev);
    close(sock);
    close(fd);
    return 0;
}
