#!/usr/bin/python3
"""Run as carbridge@probe (checks.py's syscall_probe_check: the packaged template unit, ExecStart= replaced):
tries what the unit's confinement forbids and prints one line per attempt, for the journal:

    PROBE <call> ok|<errno name>

    probe.py TTY ADDRESS   (TTY: a tty of group dialout, opened as a serial:// link opens its device;
                            ADDRESS: one of this machine's, outside the unit's IPAddressAllow=)

A call the seccomp filter refuses with SystemCallErrorNumber=EPERM comes back as EPERM; without that
setting the filter would kill the process (SIGSYS) and "PROBE done" would never be printed.
"""
import errno, mmap, os, socket, sys


def attempt(name, call):
    try:
        call()
        print("PROBE %s ok" % name)
    except socket.timeout:
        print("PROBE %s timeout" % name)
    except OSError as error:
        print("PROBE %s %s" % (name, errno.errorcode.get(error.errno, error.errno)))


attempt("sched_setaffinity", lambda: os.sched_setaffinity(0, os.sched_getaffinity(0)))   # @resources
attempt("setpriority", lambda: os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0) + 1))   # @resources
attempt("mmap-write-exec", lambda: mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC))
attempt("open-dialout-tty", lambda: os.close(os.open(sys.argv[1], os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)))


def connect(host):
    with socket.create_connection((host, 9), timeout=2):
        pass


# nothing listens on port 9: ECONNREFUSED where the address is allowed; where IPAddressDeny= drops the
# packets, the SYN goes unanswered and the connect times out
attempt("connect-localhost", lambda: connect("127.0.0.1"))
attempt("connect-denied", lambda: connect(sys.argv[2]))
print("PROBE groups %s" % ",".join(str(g) for g in os.getgroups()))
print("PROBE done")
