#!/usr/bin/python3
"""The car: an RFCOMM server that stands in for the robot car's HC-05 module.

    car.py --addr AA:BB:CC:DD:EE:FF [--channel 1] --log FILE [--status-every SECONDS]

Listens on the given local controller address and channel (the car's controller, hci1 in the
guest), accepts connections (several in a row: a bridge that reconnects), and writes one log line
per event, each stamped with CLOCK_MONOTONIC (time.monotonic()), so receipt times compare with the
times the test scripts wrote input events:

    <monotonic seconds> LISTEN <addr> <channel>
    <monotonic seconds> CONNECT <peer addr>
    <monotonic seconds> RX <line without terminator>
    <monotonic seconds> TX <line sent to the bridge>
    <monotonic seconds> EOF <peer addr>

The car answers like a real one would: "READY RoboCar" on connect and, with --status-every, a
status line ("STATUS battery=7.4V") every few seconds, which the bridge must show and ignore.
SIGTERM or SIGKILL end it (SIGKILL is the "listener killed" of the link-loss scenario).
"""
import argparse, select, signal, socket, sys, time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--addr", required=True)
    ap.add_argument("--channel", type=int, default=1)
    ap.add_argument("--log", required=True)
    ap.add_argument("--status-every", type=float, default=0.0)
    args = ap.parse_args()
    log = open(args.log, "a", buffering=1)

    def note(kind, text):
        log.write("%.6f %s %s\n" % (time.monotonic(), kind, text))

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    srv = socket.socket(socket.AF_BLUETOOTH, socket.SOCK_STREAM, socket.BTPROTO_RFCOMM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((args.addr, args.channel))
    srv.listen(4)
    note("LISTEN", "%s %d" % (args.addr, args.channel))
    print("car: listening on %s channel %d" % (args.addr, args.channel), flush=True)
    peers = {}        # socket -> [peer address, pending bytes]
    next_status = time.monotonic() + args.status_every if args.status_every > 0 else None

    def send(conn, text):
        try:
            conn.sendall(text.encode() + b"\n")
            note("TX", text)
        except OSError as error:
            note("TXERR", "%s %s" % (text, error))

    while True:
        timeout = None if next_status is None else max(0.0, next_status - time.monotonic())
        readable, _, _ = select.select([srv] + list(peers), [], [], timeout)
        now = time.monotonic()
        for s in readable:
            if s is srv:
                conn, peer = srv.accept()
                peers[conn] = [peer[0], b""]
                note("CONNECT", peer[0])
                send(conn, "READY RoboCar")
                continue
            try:
                data = s.recv(4096)
            except OSError as error:
                note("RXERR", str(error))
                data = b""
            # one timestamp per recv(): every line in it arrived at that moment
            now = time.monotonic()
            if not data:
                note("EOF", peers[s][0])
                s.close()
                del peers[s]
                continue
            buf = peers[s][1] + data
            *lines, rest = buf.split(b"\n")
            peers[s][1] = rest
            for line in lines:
                log.write("%.6f RX %s\n" % (now, line.rstrip(b"\r").decode("utf-8", "backslashreplace")))
        if next_status is not None and now >= next_status:
            for conn in list(peers):
                send(conn, "STATUS battery=7.4V")
            next_status = now + args.status_every


if __name__ == "__main__":
    main()
