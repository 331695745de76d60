#!/usr/bin/python3
"""The car: an RFCOMM server that stands in for the robot car's HC-05 module.

    car.py --addr AA:BB:CC:DD:EE:FF [--channel 1] --log FILE [--status-every SECONDS]
           [--rcvbuf BYTES] [--timestamps] [--first-connection N]

Listens on the given local controller address and channel (the car's controller, hci1 in the
guest), accepts connections (several in a row: a bridge that reconnects), numbers them 1, 2, … in
the order accepted (from N with --first-connection, so a restarted car continues the numbering of
the log it appends to), and writes one log line per event, each stamped with CLOCK_MONOTONIC
(time.monotonic()), so receipt times compare with the times the test scripts wrote input events.
The kind carries the connection number after a slash:

    <monotonic seconds> LISTEN <addr> <channel>
    <monotonic seconds> CONNECT/<n> <peer addr>
    <monotonic seconds> RX/<n> <line without terminator>
    <monotonic seconds> TX/<n> <line sent to the bridge>
    <monotonic seconds> EOF/<n> <peer addr>
    <monotonic seconds> PAUSE/<n> | RESUME/<n>      (SIGUSR1 / SIGUSR2, see below)
    <monotonic seconds> KTS/<n> <kernel arrival time of one received skb, CLOCK_MONOTONIC seconds>
    <monotonic seconds> SOCK/<n> rcvbuf=<SO_RCVBUF> sndbuf=<SO_SNDBUF>

The car answers like a real one would: "READY RoboCar" on connect and, with --status-every, a
status line ("STATUS battery=7.4V") every few seconds, which the bridge must show and ignore.

A car that stops reading (the stall scenario): SIGUSR1 stops reading every connection open at
that moment (new connections are still accepted and read); SIGUSR2 reads them again. --rcvbuf
sets SO_RCVBUF on each accepted socket (the kernel's minimum is about 2.3 kB), so RFCOMM flow
control throttles the sender soon after the car stops reading. --timestamps turns on
SO_TIMESTAMPNS: for every skb a recvmsg() returns, a KTS line gives the time the kernel received
it (the HCI receive stamp, CLOCK_REALTIME converted to CLOCK_MONOTONIC), so the test can tell
the frames that had arrived while the car was not reading from those that arrived only later.

SIGTERM or SIGKILL end it (SIGKILL is the "listener killed" of the link-loss scenario).
"""
import argparse, select, signal, socket, struct, sys, time

SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)   # asm-generic/socket.h (x86_64: 35)
SCM_TIMESTAMPNS = SO_TIMESTAMPNS


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--addr", required=True)
    ap.add_argument("--channel", type=int, default=1)
    ap.add_argument("--log", required=True)
    ap.add_argument("--status-every", type=float, default=0.0)
    ap.add_argument("--rcvbuf", type=int, default=0)
    ap.add_argument("--timestamps", action="store_true")
    ap.add_argument("--first-connection", type=int, default=1)
    args = ap.parse_args()
    log = open(args.log, "a", buffering=1)

    def note(kind, text):
        log.write("%.6f %s %s\n" % (time.monotonic(), kind, text))

    control = {"pause": False, "resume": False}

    def on_pause(*_):
        control["pause"] = True

    def on_resume(*_):
        control["resume"] = True

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    signal.signal(signal.SIGUSR1, on_pause)
    signal.signal(signal.SIGUSR2, on_resume)
    srv = socket.socket(socket.AF_BLUETOOTH, socket.SOCK_STREAM, socket.BTPROTO_RFCOMM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((args.addr, args.channel))
    srv.listen(4)
    note("LISTEN", "%s %d" % (args.addr, args.channel))
    print("car: listening on %s channel %d" % (args.addr, args.channel), flush=True)
    peers = {}        # socket -> [peer address, pending bytes, connection number]
    paused = set()    # sockets the car does not read
    count = args.first_connection - 1
    next_status = time.monotonic() + args.status_every if args.status_every > 0 else None

    def send(conn, text):
        try:
            conn.sendall(text.encode() + b"\n")
            note("TX/%d" % peers[conn][2], text)
        except OSError as error:
            note("TXERR/%d" % peers[conn][2], "%s %s" % (text, error))

    def receive(s):
        """One recv (recvmsg with --timestamps); returns the bytes and logs the skbs' arrival times."""
        if not args.timestamps:
            return s.recv(4096)
        data, ancillary, _, _ = s.recvmsg(4096, socket.CMSG_SPACE(16) * 512)
        offset = time.time() - time.monotonic()
        for level, kind, blob in ancillary:
            if level == socket.SOL_SOCKET and kind == SCM_TIMESTAMPNS and len(blob) >= 16:
                sec, nsec = struct.unpack("qq", blob[:16])
                note("KTS/%d" % peers[s][2], "%.6f" % (sec + nsec / 1e9 - offset))
        return data

    while True:
        if control["pause"]:
            control["pause"] = False
            for conn in peers:
                if conn not in paused:
                    paused.add(conn)
                    note("PAUSE/%d" % peers[conn][2], peers[conn][0])
        if control["resume"]:
            control["resume"] = False
            for conn in list(paused):
                note("RESUME/%d" % peers[conn][2], peers[conn][0])
            paused.clear()
        timeout = 0.05 if next_status is None else max(0.0, min(0.05, next_status - time.monotonic()))
        readable, _, _ = select.select([srv] + [p for p in peers if p not in paused], [], [], timeout)
        now = time.monotonic()
        for s in readable:
            if s is srv:
                conn, peer = srv.accept()
                count += 1
                peers[conn] = [peer[0], b"", count]
                note("CONNECT/%d" % count, peer[0])
                if args.rcvbuf > 0:
                    conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, args.rcvbuf)
                if args.timestamps:
                    conn.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
                if args.rcvbuf > 0 or args.timestamps:
                    note("SOCK/%d" % count, "rcvbuf=%d sndbuf=%d" % (
                        conn.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF),
                        conn.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)))
                send(conn, "READY RoboCar")
                continue
            if s in paused:
                continue
            n = peers[s][2]
            try:
                data = receive(s)
            except OSError as error:
                note("RXERR/%d" % n, str(error))
                data = b""
            # one timestamp per recv(): every line in it arrived at that moment
            now = time.monotonic()
            if not data:
                note("EOF/%d" % n, peers[s][0])
                s.close()
                del peers[s]
                paused.discard(s)
                continue
            buf = peers[s][1] + data
            *lines, rest = buf.split(b"\n")
            peers[s][1] = rest
            for line in lines:
                log.write("%.6f RX/%d %s\n" % (now, n, line.rstrip(b"\r").decode("utf-8", "backslashreplace")))
        if next_status is not None and now >= next_status:
            for conn in list(peers):
                send(conn, "STATUS battery=7.4V")
            next_status = now + args.status_every


if __name__ == "__main__":
    main()
