// Linux system headers the Swift Glibc module does not expose (epoll, timerfd,
// signalfd, eventfd, pty, input_event), plus non-variadic wrappers for the
// variadic calls (ioctl, fcntl, open) Swift cannot call directly.
#ifndef CARBRIDGE_CLINUX_SHIM_H
#define CARBRIDGE_CLINUX_SHIM_H
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pty.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>
#include <linux/input.h>

static inline int cb_ioctl_int(int fd, unsigned long request, int value) { return ioctl(fd, request, value); }
static inline int cb_ioctl_ptr(int fd, unsigned long request, void *arg) { return ioctl(fd, request, arg); }
static inline int cb_fcntl_get(int fd, int cmd) { return fcntl(fd, cmd); }
static inline int cb_fcntl_set(int fd, int cmd, int value) { return fcntl(fd, cmd, value); }
static inline int cb_open(const char *path, int flags, unsigned int mode) { return open(path, flags, mode); }
static inline unsigned long cb_TIOCGWINSZ(void) { return TIOCGWINSZ; }
static inline unsigned long cb_TIOCSCTTY(void) { return TIOCSCTTY; }
static inline unsigned long cb_FIONREAD(void) { return FIONREAD; }
static inline unsigned long cb_EVIOCGRAB(void) { return EVIOCGRAB; }
/// EVIOCGKEY(len): the keys down, as a bit mask of `len` bytes.
static inline unsigned long cb_EVIOCGKEY(unsigned int len) { return EVIOCGKEY(len); }
/// EVIOCGABS(code): an axis's `struct input_absinfo`, its current value among it.
static inline unsigned long cb_EVIOCGABS(unsigned int code) { return EVIOCGABS(code); }
/// setns(2) for the calling thread (the Glibc module does not expose it without _GNU_SOURCE).
static inline int cb_setns(int fd, int nstype) { return (int)syscall(SYS_setns, fd, nstype); }
/// CLONE_NEWNET, for cb_setns.
static inline int cb_CLONE_NEWNET(void) { return 0x40000000; }
/// Size of one kernel `struct input_event` on this architecture.
static inline int cb_input_event_size(void) { return (int)sizeof(struct input_event); }
#endif
