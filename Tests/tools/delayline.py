#!/usr/bin/python3
"""A user-space wire between two interfaces that delays the car's ACKs, for carbridge's tests.

Runs inside a middle network namespace and forwards every Ethernet frame between --host-if
(the side towards carbridge) and --car-if (the side towards the car), as a bridge would.
Frames from the car are held back by one of two policies:

  --delay MS   every frame from the car arrives MS later (a long round trip)
  --lwip       the car's pure ACKs follow lwIP's delayed-ACK rule (tcp_in.c, tcp_ack()):
               an ACK goes out at once when a second data segment has arrived since the
               last one, otherwise when the 250 ms fast timer fires

The host's kernel offloads checksums on veth, so TCP checksums are recomputed on every frame
this program sends. It prints "ready" once both sockets are open and runs until killed.
"""
import argparse
import heapq
import select
import socket
import struct
import time

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4


def checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def tcp_info(frame: bytes):
    """(header offset, payload length, flags) for an IPv4 TCP frame, else None."""
    if len(frame) < 34 or frame[12:14] != b"\x08\x00" or frame[23] != 6:
        return None
    ihl = (frame[14] & 0x0F) * 4
    total = struct.unpack("!H", frame[16:18])[0]
    tcp = 14 + ihl
    if len(frame) < tcp + 20:
        return None
    data_offset = (frame[tcp + 12] >> 4) * 4
    return tcp, total - ihl - data_offset, frame[tcp + 13]


def fix_checksum(frame: bytes) -> bytes:
    info = tcp_info(frame)
    if info is None:
        return frame
    tcp = info[0]
    ihl = (frame[14] & 0x0F) * 4
    total = struct.unpack("!H", frame[16:18])[0]
    segment = bytearray(frame[tcp:14 + total])
    segment[16:18] = b"\0\0"
    pseudo = frame[26:34] + struct.pack("!BBH", 0, 6, len(segment))
    segment[16:18] = struct.pack("!H", checksum(pseudo + bytes(segment)))
    return frame[:tcp] + bytes(segment) + frame[14 + total:]


def is_pure_ack(frame: bytes) -> bool:
    info = tcp_info(frame)
    if info is None:
        return False
    _, payload, flags = info
    return payload == 0 and flags & 0x10 and not flags & 0x07  # ACK, no SYN/FIN/RST


def has_data(frame: bytes) -> bool:
    info = tcp_info(frame)
    return info is not None and info[1] > 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host-if", required=True)
    parser.add_argument("--car-if", required=True)
    parser.add_argument("--delay", type=float, default=0.0, help="ms added to every frame from the car")
    parser.add_argument("--lwip", action="store_true", help="lwIP's delayed-ACK rule for the car's ACKs")
    args = parser.parse_args()

    host = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    host.bind((args.host_if, 0))
    car = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    car.bind((args.car_if, 0))
    print("ready", flush=True)

    pending = []  # (due, seq, frame) to send towards the host
    seq = 0
    held_ack = None  # (first held at, frame)
    segments_since_ack = 0
    while True:
        now = time.monotonic()
        timeout = 0.25
        if pending:
            timeout = min(timeout, max(0.0, pending[0][0] - now))
        if held_ack:
            timeout = min(timeout, max(0.0, held_ack[0] + 0.25 - now))
        readable, _, _ = select.select([host, car], [], [], timeout)
        now = time.monotonic()
        for sock in readable:
            frame, address = sock.recvfrom(65535)
            if address[2] == PACKET_OUTGOING:
                continue
            if sock is host:
                if has_data(frame):
                    segments_since_ack += 1
                car.send(fix_checksum(frame))
                continue
            if args.lwip and is_pure_ack(frame):
                if segments_since_ack >= 2:
                    seq += 1
                    heapq.heappush(pending, (now, seq, frame))
                    held_ack = None
                    segments_since_ack = 0
                else:
                    held_ack = (held_ack[0] if held_ack else now, frame)
                continue
            if args.lwip and has_data(frame):
                held_ack = None  # the data carries a newer cumulative ACK
                segments_since_ack = 0
            seq += 1
            heapq.heappush(pending, (now + args.delay / 1000.0, seq, frame))
        if held_ack and now >= held_ack[0] + 0.25:
            seq += 1
            heapq.heappush(pending, (now, seq, held_ack[1]))
            held_ack = None
            segments_since_ack = 0
        while pending and pending[0][0] <= now:
            _, _, frame = heapq.heappop(pending)
            host.send(fix_checksum(frame))


if __name__ == "__main__":
    main()
