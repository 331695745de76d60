"""A Nintendo Switch Pro Controller on /dev/uhid, for the kernel's hid-nintendo driver (Debian's 6.1).

As BlueZ makes one: bus Bluetooth, 057e:2009, the name "Pro Controller". hid-nintendo's probe
(drivers/hid/hid-nintendo.c, nintendo_hid_probe) talks to it synchronously, with hid_device_io_start, so
the answers reach it during the probe:

  80 02                  the USB handshake, sent to every Pro Controller whatever its bus; a Bluetooth
                         controller does not answer (input 0x81 02 would make the driver take it for a
                         USB one): the driver waits 1 s, tries once more, then goes on ("assume ble")
  01 NN <rumble 8> SC .. a subcommand; the answer is input report 0x21: the 12 bytes of a standard report
                         (timer, battery, buttons, sticks, vibrator), then ACK, SC, data. Asked, in order:
                         10 SPI flash read (LE32 address, size) of 0x8010+2 and 0x801b+2 (user stick
                         calibration magic b2 a1: answered "none", ff ff), 0x603d+9 and 0x6046+9 (the
                         factory stick calibration), 0x8026+2 (user IMU magic), 0x6020+24 (factory IMU
                         calibration); 03 30 (report mode: standard full, 0x30); 48 01 (vibration on);
                         40 01 (IMU on); 02 (device info: firmware, type 03 = Pro Controller, MAC);
                         30 (player LEDs); 38 (home LED)
  10 NN <rumble 8>       rumble only: no answer

Each wait is 1 s (HZ) or 250 ms, two tries. Then the controller streams report 0x30 (49 bytes: ID, timer,
battery, 3 button bytes, two 3-byte 12-bit sticks, vibrator, 3 IMU samples); the driver, once its probe
is done, reports them on "Nintendo Switch Pro Controller" (and the IMU on "... IMU"), and before sending
a subcommand waits up to 250 ms for a report.
"""
import struct, threading, time
import uhid

VENDOR, PRODUCT = 0x057E, 0x2009
HID_NAME = "Pro Controller"
NODE_NAME = "Nintendo Switch Pro Controller"
IMU_NAME = "Nintendo Switch Pro Controller IMU"

# The input report bits (hid-nintendo's JC_BTN_*).
BTN = {"Y": 0, "X": 1, "B": 2, "A": 3, "R": 6, "ZR": 7, "MINUS": 8, "PLUS": 9, "RSTICK": 10, "LSTICK": 11,
       "HOME": 12, "CAPTURE": 13, "DOWN": 16, "UP": 17, "RIGHT": 18, "LEFT": 19, "L": 22, "ZL": 23}
STICK_CENTRE, STICK_SPAN = 2048, 1500   # the calibration this controller reports: centre +/- 1500 (12-bit)


def _pair12(a, b):
    """Two 12-bit values packed into 3 bytes, as the sticks and their calibration are."""
    return bytes([a & 0xFF, ((a >> 8) & 0x0F) | ((b & 0x0F) << 4), (b >> 4) & 0xFF])


def _descriptor():
    """Vendor reports with the Pro Controller's Bluetooth report IDs and sizes (hid-nintendo reads raw
    reports; hid-core passes only the IDs the descriptor declares)."""
    d = [0x05, 0x01, 0x09, 0x05, 0xA1, 0x01,                  # Generic Desktop, Game Pad, Collection (Application)
         0x06, 0x01, 0xFF, 0x15, 0x00, 0x26, 0xFF, 0x00, 0x75, 0x08]   # Usage Page (Vendor 0xff01), 0..255, 8 bits
    for rid, count in ((0x21, 48), (0x30, 48), (0x3F, 11)):
        d += [0x85, rid, 0x09, rid, 0x95, count, 0x81, 0x02]    # Input (Data, Var, Abs)
    for rid, count in ((0x01, 48), (0x10, 9), (0x11, 48)):
        d += [0x85, rid, 0x09, rid, 0x95, count, 0x91, 0x02]    # Output (Data, Var, Abs)
    return bytes(d + [0xC0])


REPORT_DESCRIPTOR = _descriptor()


def _spi():
    spi = {}

    def put(addr, data):
        for i, b in enumerate(data):
            spi[addr + i] = b
    # factory IMU calibration: accel offsets 0, scales 16384; gyro offsets 0, scales 13371 (LE16)
    put(0x6020, struct.pack("<3h3h3h3h", 0, 0, 0, 16384, 16384, 16384, 0, 0, 0, 13371, 13371, 13371))
    # left stick: max above x/y, centre x/y, min below x/y; right stick: centre, min below, max above
    put(0x603D, _pair12(STICK_SPAN, STICK_SPAN) + _pair12(STICK_CENTRE, STICK_CENTRE) + _pair12(STICK_SPAN, STICK_SPAN))
    put(0x6046, _pair12(STICK_CENTRE, STICK_CENTRE) + _pair12(STICK_SPAN, STICK_SPAN) + _pair12(STICK_SPAN, STICK_SPAN))
    return spi


class ProController:
    """A Bluetooth Pro Controller on /dev/uhid whose test side answers hid-nintendo. `mac` is its address
    (also the uniq BlueZ gives the HID device). With `answer_usb=True` it answers the USB handshake as a
    wired one would (on a USB bus)."""

    def __init__(self, mac, bus=uhid.BUS_BLUETOOTH, answer_usb=False, rate_hz=60, name=HID_NAME,
                 phys="00:aa:01:00:00:00"):
        self.mac = mac
        self.answer_usb = answer_usb
        self.spi = _spi()
        self.state = threading.Lock()
        self.buttons = 0
        self.lx = self.ly = self.rx = self.ry = STICK_CENTRE
        self.timer = 0
        self.streaming = False
        self.requests = []          # (time, report) of every output report
        self.subcommands = []       # (time, subcommand id, its data)
        self.period = 1.0 / rate_hz
        self.running = True
        self.dev = uhid.UhidDevice(name, mac.lower(), bus, VENDOR, PRODUCT, 0x0001, REPORT_DESCRIPTOR, phys=phys,
                                   on_output=self._on_output)
        self.streamer = threading.Thread(target=self._stream, daemon=True)
        self.streamer.start()

    # ---- reports

    def _standard(self, report_id):
        """The first 13 bytes every input report 0x21/0x30 starts with (call with self.state held)."""
        self.timer = (self.timer + 1) & 0xFF
        b = self.buttons
        return (bytes([report_id, self.timer, 0x8E, b & 0xFF, (b >> 8) & 0xFF, (b >> 16) & 0xFF])
                + _pair12(self.lx, self.ly) + _pair12(self.rx, self.ry) + bytes([0x00]))

    def _full(self):
        # three IMU samples: level, 1 g on z (4096 per g), no rotation
        imu = struct.pack("<6h", 0, 0, 4096, 0, 0, 0) * 3
        return self._standard(0x30) + imu

    def _send_full(self):
        with self.state:
            report = self._full()
            return self.dev.send(report)

    def _stream(self):
        while self.running:
            if self.streaming:
                try:
                    self._send_full()
                except OSError:
                    return
            time.sleep(self.period)

    # ---- the driver's requests (on the uhid reader thread)

    def _reply(self, subcmd, ack, data=b""):
        with self.state:
            report = self._standard(0x21) + bytes([ack, subcmd]) + bytes(data)
            self.dev.send(report.ljust(49, b"\0"))

    def _on_output(self, data, rtype):
        t = uhid.monotonic()
        self.requests.append((t, bytes(data)))
        if not data:
            return
        if data[0] == 0x80 and len(data) >= 2:
            if self.answer_usb and data[1] in (0x01, 0x02, 0x03):
                self.dev.send(bytes([0x81, data[1]]).ljust(49, b"\0"))
            return
        if data[0] != 0x01 or len(data) < 11:
            return                          # 0x10: rumble only, no answer
        subcmd, args = data[10], data[11:]
        self.subcommands.append((t, subcmd, bytes(args)))
        if subcmd == 0x10:                  # SPI flash read
            addr, size = struct.unpack_from("<IB", args)
            chunk = bytes(self.spi.get(addr + i, 0xFF) for i in range(size))
            self._reply(subcmd, 0x90, struct.pack("<IB", addr, size) + chunk)
        elif subcmd == 0x02:                # device info: firmware 3.72, type 3 (Pro Controller), 02, MAC, 03 02
            mac = bytes(int(x, 16) for x in self.mac.split(":"))
            self._reply(subcmd, 0x82, bytes([0x03, 0x48, 0x03, 0x02]) + mac + bytes([0x03, 0x02]))
        elif subcmd == 0x03:                # report mode
            self._reply(subcmd, 0x80)
            if args[:1] == b"\x30":
                self.streaming = True
        else:                               # 0x48 vibration, 0x40 IMU, 0x30 player LEDs, 0x38 home LED, ...
            self._reply(subcmd, 0x80)

    # ---- the player

    def press(self, *names):
        """Holds the buttons `names` down (and releases the others); returns the time of the report sent."""
        with self.state:
            self.buttons = 0
            for n in names:
                self.buttons |= 1 << BTN[n]
        return self._send_full()

    def tap(self, name, hold_s=0.1):
        t = self.press(name)
        time.sleep(hold_s)
        self.press()
        return t

    def left_stick(self, x, y=0.0):
        """The left stick at x, y (-1..1 each; y up); returns the time of the report sent."""
        with self.state:
            self.lx = int(round(STICK_CENTRE + x * STICK_SPAN))
            self.ly = int(round(STICK_CENTRE + y * STICK_SPAN))
        return self._send_full()

    def destroy(self):
        self.running = False
        t = self.dev.destroy()
        self.streamer.join(2)
        return t

    def close(self):
        self.running = False
        self.dev.close()
        self.streamer.join(2)

    def conversation(self):
        return ["%.3f %s" % (t, d[:16].hex(" ") + (" ..." if len(d) > 16 else "")) for t, d in self.requests]
