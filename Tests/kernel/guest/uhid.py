"""A HID device on /dev/uhid whose test side answers what the kernel's HID driver asks.

A device made here is what a Bluetooth or USB transport makes: the kernel binds the HID driver that
claims its bus, vendor and product (hid-wiimote, hid-nintendo, ...), and the driver talks to the device
through output reports (UHID_OUTPUT events on our fd) and GET_REPORT/SET_REPORT requests, and waits
for the answers as input reports (UHID_INPUT2). A reader thread hands each request to `on_output`
(and answers GET/SET_REPORT through `on_get_report`/`on_set_report`) as soon as it arrives: the drivers
wait for their replies with a timeout (hid-wiimote: 1 s each).

Layout of struct uhid_event (include/uapi/linux/uhid.h, packed): __u32 type, then the request; the
largest, uhid_create2_req, makes it 4376 bytes.
"""
import os, select, struct, threading, time

UHID_DESTROY, UHID_START, UHID_STOP, UHID_OPEN, UHID_CLOSE, UHID_OUTPUT = 1, 2, 3, 4, 5, 6
UHID_GET_REPORT, UHID_GET_REPORT_REPLY, UHID_CREATE2, UHID_INPUT2 = 9, 10, 11, 12
UHID_SET_REPORT, UHID_SET_REPORT_REPLY = 13, 14
EVENT_NAMES = {UHID_START: "START", UHID_STOP: "STOP", UHID_OPEN: "OPEN", UHID_CLOSE: "CLOSE",
               UHID_OUTPUT: "OUTPUT", UHID_GET_REPORT: "GET_REPORT", UHID_SET_REPORT: "SET_REPORT"}
UHID_DATA_MAX = 4096
EVENT_SIZE = 4376
BUS_USB, BUS_BLUETOOTH = 0x03, 0x05
# rtype of UHID_OUTPUT / GET_REPORT / SET_REPORT (enum uhid_report_type)
UHID_FEATURE_REPORT, UHID_OUTPUT_REPORT, UHID_INPUT_REPORT = 0, 1, 2


def monotonic():
    return time.monotonic()


class UhidDevice:
    """One /dev/uhid device. `on_output(data, rtype)` runs on the reader thread for every UHID_OUTPUT
    (data: the report, report ID first); it may call send(). `log` keeps (time, event name, bytes)."""

    def __init__(self, name, uniq, bus, vendor, product, version, rdesc, phys="", country=0,
                 on_output=None, on_get_report=None, on_set_report=None):
        self.name, self.uniq = name, uniq
        self.on_output = on_output
        self.on_get_report = on_get_report
        self.on_set_report = on_set_report
        self.log = []
        self.lock = threading.Lock()
        self.opened = threading.Event()
        self.started = threading.Event()
        self.fd = os.open("/dev/uhid", os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
        self.running = True
        self.errors = []
        self.thread = threading.Thread(target=self._reader, daemon=True)
        self.thread.start()
        create = struct.pack("<I128s64s64sHHIIII4096s", UHID_CREATE2, name.encode(), phys.encode(), uniq.encode(),
                             len(rdesc), bus, vendor, product, version, country, bytes(rdesc))
        self.created_at = monotonic()
        self._write(create)

    def _write(self, event):
        with self.lock:
            if self.fd is None:
                raise OSError("uhid device closed")
            os.write(self.fd, event)

    def send(self, report):
        """An input report (report ID first) as UHID_INPUT2; returns the monotonic time just before the write."""
        report = bytes(report)
        t = monotonic()
        self._write(struct.pack("<IH", UHID_INPUT2, len(report)) + report)
        return t

    def _reader(self):
        while self.running:
            fd = self.fd
            if fd is None:
                return
            try:
                ready, _, _ = select.select([fd], [], [], 0.1)
            except (OSError, ValueError):
                return
            if not ready:
                continue
            try:
                event = os.read(fd, EVENT_SIZE)
            except BlockingIOError:
                continue
            except OSError:
                return
            if len(event) < 4:
                continue
            kind = struct.unpack_from("<I", event)[0]
            t = monotonic()
            try:
                self._handle(t, kind, event)
            except Exception as error:   # a broken handler must not kill the reader silently
                self.errors.append(repr(error))

    def _handle(self, t, kind, event):
        if kind == UHID_OUTPUT:
            size, rtype = struct.unpack_from("<HB", event, 4 + UHID_DATA_MAX)
            data = event[4:4 + size]
            self.log.append((t, "OUTPUT", data))
            if self.on_output:
                self.on_output(data, rtype)
        elif kind == UHID_GET_REPORT:
            rid, rnum, rtype = struct.unpack_from("<IBB", event, 4)
            self.log.append((t, "GET_REPORT", bytes([rnum, rtype])))
            err, data = (5, b"") if self.on_get_report is None else self.on_get_report(rnum, rtype)
            self._write(struct.pack("<IIHH", UHID_GET_REPORT_REPLY, rid, err, len(data)) + bytes(data))
        elif kind == UHID_SET_REPORT:
            rid, rnum, rtype, size = struct.unpack_from("<IBBH", event, 4)
            data = event[12:12 + size]
            self.log.append((t, "SET_REPORT", bytes([rnum, rtype]) + data))
            err = 5 if self.on_set_report is None else self.on_set_report(rnum, rtype, data)
            self._write(struct.pack("<IIH", UHID_SET_REPORT_REPLY, rid, err))
        else:
            self.log.append((t, EVENT_NAMES.get(kind, str(kind)), b""))
            if kind == UHID_START:
                self.started.set()
            elif kind == UHID_OPEN:
                self.opened.set()

    def outputs(self, since=0.0):
        """[(time, report)] of the output reports the driver sent."""
        return [(t, d) for t, k, d in list(self.log) if k == "OUTPUT" and t >= since]

    def destroy(self):
        """UHID_DESTROY (the link dropped: the kernel removes the device at once); returns the time just
        before the write. Closes the fd."""
        t = monotonic()
        if self.fd is not None:
            try:
                self._write(struct.pack("<I", UHID_DESTROY))
            except OSError:
                pass
        self.close()
        return t

    def close(self):
        self.running = False
        self.thread.join(2)
        with self.lock:
            if self.fd is not None:
                os.close(self.fd)   # closing the fd destroys the device too
                self.fd = None


def hid_dir(uniq):
    """/sys/bus/hid/devices/<bus>:<vendor>:<product>.<n> of the HID device whose HID_UNIQ is `uniq`."""
    base = "/sys/bus/hid/devices"
    try:
        entries = os.listdir(base)
    except OSError:
        return None
    for entry in entries:
        try:
            with open(os.path.join(base, entry, "uevent")) as f:
                if "HID_UNIQ=%s\n" % uniq in f.read():
                    return os.path.realpath(os.path.join(base, entry))
        except OSError:
            pass
    return None


def event_nodes(hid_path):
    """{name: /dev/input/eventN} of the input devices under the HID device at `hid_path`."""
    out = {}
    if not hid_path:
        return out
    try:
        inputs = [e for e in os.listdir(os.path.join(hid_path, "input")) if e.startswith("input")]
    except OSError:
        return out
    for inp in inputs:
        d = os.path.join(hid_path, "input", inp)
        try:
            name = open(os.path.join(d, "name")).read().strip()
            events = [e for e in os.listdir(d) if e.startswith("event")]
        except OSError:
            continue
        for ev in events:
            if os.path.exists("/dev/input/" + ev):
                out[name] = "/dev/input/" + ev
    return out


class HangupWatch:
    """Holds an evdev node open and notes when the kernel hangs it up (read() fails with ENODEV: the input
    device was unregistered), the earliest moment a reader such as carbridge can know the device is gone."""

    def __init__(self, node):
        self.fd = os.open(node, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        self.at = None
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while self.running and self.at is None:
            try:
                ready, _, _ = select.select([self.fd], [], [], 0.05)
                if ready:
                    os.read(self.fd, 24 * 64)
            except BlockingIOError:
                continue
            except OSError:
                self.at = monotonic()   # ENODEV (or the fd is gone)
                return

    def wait(self, timeout_s):
        self.thread.join(timeout_s)
        return self.at

    def close(self):
        self.running = False
        self.thread.join(1)
        try:
            os.close(self.fd)
        except OSError:
            pass
