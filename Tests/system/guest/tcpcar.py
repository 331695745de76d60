#!/usr/bin/python3
"""The car of the system stage: a TCP server on 127.0.0.1 standing in for a Wi-Fi robot car.

    tcpcar.py --port PORT --log FILE

Accepts connections (a carbridge that restarts connects again), numbers them 1, 2, … in the order
accepted and writes one log line per event, stamped with CLOCK_MONOTONIC (time.monotonic()), in the
format of the kernel stage's RFCOMM car (Tests/kernel/guest/car.py), so kharness.CarLog reads it:

    <monotonic seconds> LISTEN 127.0.0.1 <port>
    <monotonic seconds> CONNECT/<n> <peer>
    <monotonic seconds> RX/<n> <line without terminator>
    <monotonic seconds> EOF/<n> <peer>

SIGTERM ends it.
"""
import argparse, select, signal, socket, sys, time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--log", required=True)
    args = ap.parse_args()
    log = open(args.log, "a", buffering=1)

    def note(kind, text):
        log.write("%.6f %s %s\n" % (time.monotonic(), kind, text))

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", args.port))
    srv.listen(4)
    note("LISTEN", "127.0.0.1 %d" % args.port)
    peers = {}   # socket -> [peer, pending bytes, connection number]
    count = 0
    while True:
        readable, _, _ = select.select([srv] + list(peers), [], [])
        for s in readable:
            if s is srv:
                conn, peer = srv.accept()
                count += 1
                peers[conn] = ["%s:%d" % peer, b"", count]
                note("CONNECT/%d" % count, peers[conn][0])
                continue
            n = peers[s][2]
            try:
                data = s.recv(4096)
            except OSError as error:
                note("RXERR/%d" % n, str(error))
                data = b""
            now = time.monotonic()   # every line of one recv() arrived at this moment
            if not data:
                note("EOF/%d" % n, peers[s][0])
                s.close()
                del peers[s]
                continue
            *lines, rest = (peers[s][1] + data).split(b"\n")
            peers[s][1] = rest
            for line in lines:
                log.write("%.6f RX/%d %s\n" % (now, n, line.rstrip(b"\r").decode("utf-8", "backslashreplace")))


if __name__ == "__main__":
    main()
