#!/usr/bin/python3
"""Infrastructure checks that need no carbridge: they prove the guest can host the scenarios.

Each check writes its own "PASS: infra: ..." / "FAIL: infra: ..." line."""
import os, select, socket, subprocess, sys, time, traceback
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evdev
from evdev import ecodes as e
import kharness as k


def udev_props(node):
    subprocess.run(["udevadm", "settle", "-t", "10"])
    out = subprocess.run(["udevadm", "info", "--query=property", "--name", node], capture_output=True, text=True).stdout
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


def run(name, fn):
    print("--- infra: " + name, flush=True)
    try:
        ok, why = fn()
    except Exception as error:
        traceback.print_exc()
        ok, why = False, repr(error)
    k.result(ok, "infra: " + name, why)


def pad_visible():
    pad = k.Pad()
    try:
        props = udev_props(pad.node)
        print("pad", pad.node, {p: v for p, v in props.items() if p.startswith("ID_INPUT")}, flush=True)
        if props.get("ID_INPUT_JOYSTICK") != "1":
            return False, "udev did not tag %s ID_INPUT_JOYSTICK=1" % pad.node
        dev = evdev.InputDevice(pad.node)
        pad.press(e.BTN_START)
        got = []
        end = time.monotonic() + 3
        while time.monotonic() < end and (e.EV_KEY, e.BTN_START, 1) not in got:
            if select.select([dev.fd], [], [], 0.2)[0]:
                got += [(ev.type, ev.code, ev.value) for ev in dev.read()]
        dev.close()
        return (e.EV_KEY, e.BTN_START, 1) in got, "python-evdev did not read BTN_START back"
    finally:
        pad.close()


def accel_visible():
    sensor = k.MotionSensor()
    try:
        props = udev_props(sensor.node)
        print("motion sensor", sensor.node, {p: v for p, v in props.items() if p.startswith("ID_INPUT")}, flush=True)
        return props.get("ID_INPUT_ACCELEROMETER") == "1", "udev did not tag it ID_INPUT_ACCELEROMETER=1"
    finally:
        sensor.close()


def rfcomm_car():
    log = "/tmp/kt/infra-car.log"
    car = k.Car(log)
    if not car.addr:
        return False, "no hci1 address"
    if not car.start():
        return False, "car.py did not start listening (see %s.stderr)" % log
    try:
        phone = k.bdaddr("hci0")
        s = socket.socket(socket.AF_BLUETOOTH, socket.SOCK_STREAM, socket.BTPROTO_RFCOMM)
        s.settimeout(15)
        s.bind((phone, 0))
        t0 = time.monotonic()
        s.connect((car.addr, 1))
        print("rfcomm connect took %.3fs" % (time.monotonic() - t0), flush=True)
        s.sendall(b"M,0,40,1\n")
        reply = b""
        while not reply.endswith(b"\n"):
            reply += s.recv(100)
        s.close()
        got = k.wait_until(lambda: [f.text for f in car.log.frames()], 3)
        print("phone got %r; car got %r" % (reply, got), flush=True)
        print(open(log).read(), flush=True)
        return reply == b"READY RoboCar\n" and got == ["M,0,40,1"], "reply %r, car received %r" % (reply, got)
    finally:
        car.stop()


def inquiry():
    car = k.bdaddr("hci1")
    out = subprocess.run(["hcitool", "-i", "hci0", "scan", "--flush"], capture_output=True, text=True, timeout=40).stdout
    print(out, flush=True)
    return any(car in line and "RoboCar" in line for line in out.splitlines()), "hcitool scan did not list %s RoboCar" % car


def iio():
    acc = k.StubAccelerometer()
    d = acc.create()
    if not d:
        return False, "no mxc4005 iio device appeared"
    try:
        def read():
            return [int(open("%s/in_accel_%s_raw" % (d, a)).read()) for a in "xyz"]
        first = read()
        scale = open(d + "/in_accel_scale").read().strip()
        acc.roll(30)
        tilted = read()
        print("iio %s: level %s scale %s, tilted 30deg %s" % (d, first, scale, tilted), flush=True)
        return first == [0, 0, 1024] and tilted == [512, 0, 887], "level %s tilted %s" % (first, tilted)
    finally:
        acc.delete()


if __name__ == "__main__":
    run("uinput gamepad -> /dev/input/eventN, udev ID_INPUT_JOYSTICK=1, events readable", pad_visible)
    run("uinput accelerometer (INPUT_PROP_ACCELEROMETER) -> udev ID_INPUT_ACCELEROMETER=1", accel_visible)
    run("RFCOMM car server on hci1 channel 1 reachable from hci0", rfcomm_car)
    run("inquiry from hci0 finds the car by name (hcitool scan)", inquiry)
    run("mxc4005 IIO accelerometer on i2c-stub readable, tilt changes readings", iio)
