"""A Wii Balance Board on /dev/uhid, for the kernel's hid-wiimote driver.

The board is a Wii Remote on Bluetooth (057e:0306, the HID name "Nintendo RVL-WBC-01") whose extension
port holds the board (extension ID 00 00 a4 20 04 02). hid-wiimote (drivers/hid/hid-wiimote-core.c and
-modules.c, Debian's 6.1) talks to it with output reports and waits up to 1 s (HZ) for each answer:

  0x15 status request        -> 0x20 status: BB BB LF 00 00 VV (LF 0x02: an extension is plugged)
  0x16 write (register 0x04) -> 0x22 ack:    BB BB 16 EE       (EE: 0 = done)
  0x17 read  (register 0x04) -> 0x21 data:   BB BB SE AA AA D*16 (S: size-1, E: error, AA AA: the offset's low 16 bits)
  0x12 data reporting mode   (no answer; the reports then come in that mode)
  0x11 LEDs, 0x10 rumble     (no answer)

BB BB are the buttons (A: 0x0008 of the second byte), in every report. The board's data (DRM 0x32
BB BB E*8, 0x34 BB BB E*19, 0x35 BB BB A*3 E*16, 0x3d E*21) starts with its four cells, 16-bit big
endian: top right, bottom right, top left, bottom left. The calibration block at 0xa40024 (24 bytes,
read as two reads of 12) is the four cells' raw values at 0 kg, then at 17 kg, then at 34 kg; the
driver interpolates each cell (wiimod_bboard_in_ext) to units of 10 g:
  raw <= c0: 0;  raw < c17: (raw - c0) * 1700 / (c17 - c0);  else 1700 + (raw - c17) * 1700 / (c34 - c17)
(C integer division). `driver_units` is that formula, `raw_for_units` its inverse.
"""
import threading, time
import uhid

VENDOR, PRODUCT = 0x057E, 0x0306
HID_NAME = "Nintendo RVL-WBC-01"          # what a board calls itself (BlueZ passes it as the HID name)
NODE_NAME = "Nintendo Wii Remote Balance Board"
EXT_ID_BOARD = bytes([0x00, 0x00, 0xA4, 0x20, 0x04, 0x02])
EXT_ID_NUNCHUK = bytes([0x00, 0x00, 0xA4, 0x20, 0x00, 0x00])
CALIBRATION_ADDR = 0xA40024
# raw at 0 / 17 / 34 kg per cell (TR, BR, TL, BL); different per cell so that a swapped cell shows, and
# every step of at least 1700 counts per 17 kg, so that every 10 g unit has a raw value that gives it.
CALIBRATION = ((2000, 3800, 5640), (2500, 4200, 5950), (3000, 4900, 6800), (1500, 3200, 4950))

# The report descriptor a Wii Remote (and so a board) gives its host: vendor-defined reports with the IDs
# and sizes of the Wii Remote protocol. hid-wiimote reads the raw reports (HID_CONNECT_HIDRAW only), but
# hid-core passes only reports the descriptor declares: 0x20-0x22 and 0x30-0x3f inputs, 0x10-0x1a outputs.
def _descriptor():
    d = [0x05, 0x01, 0x09, 0x05, 0xA1, 0x01,                    # Generic Desktop, Game Pad, Collection (Application)
         0x85, 0x10, 0x15, 0x00, 0x26, 0xFF, 0x00, 0x75, 0x08,   # Report ID 0x10, 0..255, 8 bits
         0x95, 0x01, 0x06, 0x00, 0xFF, 0x09, 0x01, 0x91, 0x00]   # 1 byte, Usage Page (Vendor 0xff00), Usage 1, Output
    for rid, count in ((0x11, 1), (0x12, 2), (0x13, 1), (0x14, 1), (0x15, 1), (0x16, 21), (0x17, 6), (0x18, 21),
                       (0x19, 1), (0x1A, 1)):
        d += [0x85, rid, 0x95, count, 0x09, 0x01, 0x91, 0x00]   # Output (Data, Array)
    for rid, count in ((0x20, 6), (0x21, 21), (0x22, 4), (0x30, 2), (0x31, 5), (0x32, 10), (0x33, 17), (0x34, 21),
                       (0x35, 21), (0x36, 21), (0x37, 21), (0x3D, 21), (0x3E, 21), (0x3F, 21)):
        d += [0x85, rid, 0x95, count, 0x09, 0x01, 0x81, 0x00]   # Input (Data, Array)
    return bytes(d + [0xC0])


REPORT_DESCRIPTOR = _descriptor()
REPORT_SIZES = {0x30: 2, 0x31: 5, 0x32: 10, 0x33: 17, 0x34: 21, 0x35: 21, 0x36: 21, 0x37: 21, 0x3D: 21, 0x3E: 21,
                0x3F: 21}


def driver_units(raw, cell):
    """What hid-wiimote reports (10 g units) for a raw cell value."""
    c0, c17, c34 = CALIBRATION[cell]
    if raw <= c0:
        return 0
    if raw < c17:
        return (raw - c0) * 1700 // (c17 - c0)
    return 1700 + (raw - c17) * 1700 // (c34 - c17)


def raw_for_units(units, cell):
    """The smallest raw value the driver turns into `units` (10 g)."""
    c0, c17, c34 = CALIBRATION[cell]
    units = max(0, int(units))
    if units == 0:
        return c0
    if units < 1700:
        raw = c0 + -(-units * (c17 - c0) // 1700)
    else:
        raw = c17 + -(-(units - 1700) * (c34 - c17) // 1700)
    assert driver_units(raw, cell) == units, (units, cell, raw)
    return raw


def cells_for(kilograms, x=0.0, y=0.0):
    """The four cells (10 g units: TR, BR, TL, BL) of `kilograms` with the centre of pressure at (x, y)."""
    w = kilograms * 100.0
    return tuple(int(round(v)) for v in (w * (1 + x + y) / 4, w * (1 + x - y) / 4, w * (1 - x + y) / 4,
                                         w * (1 - x - y) / 4))


class WiiBoard:
    """A balance board on /dev/uhid. `ext_id` is what it answers for its extension ID; with
    `answer_calibration=False` it never answers the calibration read (a board whose firmware is wrong).
    It reports at `feed_hz` in the data reporting mode the driver chose, as a board does."""

    def __init__(self, uniq, ext_id=EXT_ID_BOARD, answer_calibration=True, feed_hz=20, name=HID_NAME,
                 phys="00:aa:01:00:00:00"):
        self.ext_id = ext_id
        self.answer_calibration = answer_calibration
        self.regs = {}
        for i, b in enumerate(ext_id):
            self.regs[0xA400FA + i] = b
        offs = CALIBRATION_ADDR
        for point in range(3):
            for cell in range(4):
                value = CALIBRATION[cell][point]
                self.regs[offs], self.regs[offs + 1] = value >> 8, value & 0xFF
                offs += 2
        self.state = threading.Lock()
        self.raw = tuple(raw_for_units(0, c) for c in range(4))
        self.button_a = False
        self.drm = 0x30            # a Wii Remote starts in the buttons-only mode
        self.drm_changes = []      # (time, mode) of every 0x12 the driver sent
        self.requests = []         # (time, report) of every output report, in order
        self.unanswered = []       # (time, what) of the requests this board ignored on purpose
        self.feed_period = 1.0 / feed_hz if feed_hz else 0
        self.dev = uhid.UhidDevice(name, uniq, uhid.BUS_BLUETOOTH, VENDOR, PRODUCT, 0x0001, REPORT_DESCRIPTOR,
                                   phys=phys, on_output=self._on_output)
        self.uniq = uniq
        self.feeding = bool(feed_hz)
        self.feeder = threading.Thread(target=self._feed, daemon=True) if feed_hz else None
        if self.feeder:
            self.feeder.start()

    # ---- the driver's requests (on the uhid reader thread)

    def _buttons(self):
        return bytes([0x00, 0x08 if self.button_a else 0x00])

    def _on_output(self, data, rtype):
        t = uhid.monotonic()
        self.requests.append((t, bytes(data)))
        if not data:
            return
        rid = data[0]
        with self.state:
            if rid == 0x15:       # status request
                self.dev.send(bytes([0x20]) + self._buttons() + bytes([0x02, 0x00, 0x00, 0xC0]))
            elif rid == 0x12 and len(data) >= 3:
                self.drm = data[2]
                self.drm_changes.append((t, data[2]))
            elif rid == 0x16 and len(data) >= 6:
                addr = (data[2] << 16) | (data[3] << 8) | data[4]
                size = data[5]
                if data[1] & 0x04:
                    for i in range(size):
                        self.regs[addr + i] = data[6 + i]
                self.dev.send(bytes([0x22]) + self._buttons() + bytes([0x16, 0x00]))
            elif rid == 0x17 and len(data) >= 7:
                addr = (data[2] << 16) | (data[3] << 8) | data[4]
                size = (data[5] << 8) | data[6]
                if not self.answer_calibration and CALIBRATION_ADDR <= addr < CALIBRATION_ADDR + 24:
                    self.unanswered.append((t, "read 0x%06x+%d" % (addr, size)))
                    return
                done = 0
                while done < size:
                    n = min(16, size - done)
                    chunk = bytes(self.regs.get(addr + done + i, 0) for i in range(n)).ljust(16, b"\0")
                    a = (addr + done) & 0xFFFF
                    self.dev.send(bytes([0x21]) + self._buttons() + bytes([((n - 1) << 4), a >> 8, a & 0xFF]) + chunk)
                    done += n

    # ---- data reports

    def _report(self):
        """The data report in the current mode (call with self.state held)."""
        cells = b"".join(bytes([v >> 8, v & 0xFF]) for v in self.raw)
        drm = self.drm
        if drm == 0x3D:
            return bytes([0x3D]) + cells.ljust(21, b"\0")
        if drm in (0x32, 0x34):
            return bytes([drm]) + self._buttons() + cells.ljust(REPORT_SIZES[drm] - 2, b"\0")
        if drm == 0x35:
            return bytes([drm]) + self._buttons() + bytes([0x80, 0x80, 0x98]) + cells.ljust(16, b"\0")
        return bytes([drm]) + self._buttons() + bytes(REPORT_SIZES.get(drm, 2) - 2)

    def _send(self):
        with self.state:
            report = self._report()
            return self.dev.send(report), report

    def _feed(self):
        while self.feeding:
            try:
                self._send()
            except OSError:
                return
            time.sleep(self.feed_period)

    def stand(self, kilograms, x=0.0, y=0.0):
        """A rider of `kilograms` with the centre of pressure at (x, y) (x right, y forward, -1..1): sets the
        raw cells and sends a report at once. Returns (time just before the write, the cells in 10 g units
        the driver reports for it, the report sent)."""
        units = cells_for(kilograms, x, y)
        with self.state:
            self.raw = tuple(raw_for_units(u, c) for c, u in enumerate(units))
        t, report = self._send()
        return t, units, report

    def press_a(self, down):
        with self.state:
            self.button_a = down
        return self._send()[0]

    def stop_feeding(self):
        self.feeding = False
        if self.feeder:
            self.feeder.join(2)

    def destroy(self):
        """The Bluetooth link drops: UHID_DESTROY. Returns the time just before the write."""
        self.feeding = False
        t = self.dev.destroy()
        if self.feeder:
            self.feeder.join(2)
        return t

    def close(self):
        self.stop_feeding()
        self.dev.close()

    def conversation(self):
        """The driver's requests as text lines, for the detail log."""
        return ["%.3f %s" % (t, d.hex(" ")) for t, d in self.requests]
