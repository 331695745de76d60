"""A real USB HID device inside the guest: a configfs gadget with the HID function (usb_f_hid) on dummy_hcd.

dummy_hcd is both a UDC (dummy_udc.0) and a USB host controller: binding the gadget to dummy_udc.0 plugs it
into the guest's own USB bus, so the host side enumerates it like any USB device (usbcore, usbhid, the HID
driver that claims its vendor:product) and the kernel makes its input node. The test writes the device's
input reports to /dev/hidgN and reads from it what the host sends to the device (the output reports a
driver writes through usbhid's interrupt OUT pipe). f_hid answers a GET_REPORT with zeros.

    gadget = UsbHidGadget("g29", 0x046D, 0xC24F, 0x8900, REPORT_DESCRIPTOR, manufacturer="Logitech", ...)
    gadget.create()             # the configfs tree (modprobe libcomposite usb_f_hid dummy_hcd, mount configfs)
    t = gadget.plug()           # bind to dummy_udc.0; /dev/hidgN open, the reader thread records output reports
    gadget.write_report(bytes)  # one input report (waits until the host took the previous one)
    gadget.outputs(since)       # [(CLOCK_MONOTONIC receive time, bytes)] the host sent
    t = gadget.unplug()         # unbind the UDC: the device is unplugged (repeatable: plug() again)
    gadget.remove()             # unplug and remove the configfs tree

/dev/hidgN exists only while the gadget is bound (f_hid's bind makes it, its unbind deletes it): unplug()
stops the reader and closes the fd before it unbinds, so nothing reads a function that is being torn down.
"""
import glob, os, select, subprocess, threading, time
import kharness as k

CONFIGFS = "/sys/kernel/config"
GADGETS = CONFIGFS + "/usb_gadget"
UDC_NAME = "dummy_udc.0"
MODULES = ["libcomposite", "usb_f_hid", "dummy_hcd"]


def monotonic():
    return time.monotonic()


def _wait(predicate, timeout_s):
    return k.wait_until(predicate, timeout_s, step_s=0.01)


def _write(path, value):
    with open(path, "wb" if isinstance(value, (bytes, bytearray)) else "w") as f:
        f.write(value)


def prepare():
    """Loads the modules and mounts configfs; returns the UDC's name. Raises when something is missing."""
    for module in MODULES:
        subprocess.run(["modprobe", module], check=True, capture_output=True)
    if not os.path.isdir(GADGETS):
        subprocess.run(["mount", "-t", "configfs", "none", CONFIGFS], check=True, capture_output=True)
    udc = _wait(lambda: UDC_NAME if os.path.exists("/sys/class/udc/" + UDC_NAME) else None, 5)
    if not udc:
        raise RuntimeError("no %s in /sys/class/udc (dummy_hcd)" % UDC_NAME)
    return udc


class UsbHidGadget:
    """One USB HID device: a gadget with one configuration and one HID function."""

    def __init__(self, name, vendor, product, bcd_device, report_desc, report_length=16, manufacturer="",
                 product_name="", serial="", bcd_usb=0x0200, max_power_ma=500, subclass=0, protocol=0):
        self.name = name
        self.path = os.path.join(GADGETS, name)
        self.vendor, self.product, self.bcd_device, self.bcd_usb = vendor, product, bcd_device, bcd_usb
        self.report_desc = bytes(report_desc)
        self.report_length = report_length
        self.strings = (manufacturer, product_name, serial)
        self.max_power_ma = max_power_ma
        self.subclass, self.protocol = subclass, protocol
        self.fd = None
        self.lock = threading.Lock()
        self.received = []     # (CLOCK_MONOTONIC time read, bytes): every output report the host sent
        self.written = []      # (time, bytes): every input report written
        self.errors = []
        self.reading = False
        self.thread = None
        self.bound = False
        self.unbind_s = None

    # ---------------------------------------------------------------- configfs

    def create(self):
        prepare()
        if os.path.exists(self.path):
            UsbHidGadget.remove_tree(self.path)
        os.mkdir(self.path)
        p = self.path
        _write(p + "/idVendor", "0x%04x" % self.vendor)
        _write(p + "/idProduct", "0x%04x" % self.product)
        _write(p + "/bcdDevice", "0x%04x" % self.bcd_device)
        _write(p + "/bcdUSB", "0x%04x" % self.bcd_usb)
        os.makedirs(p + "/strings/0x409")
        manufacturer, product_name, serial = self.strings
        _write(p + "/strings/0x409/manufacturer", manufacturer)
        _write(p + "/strings/0x409/product", product_name)
        _write(p + "/strings/0x409/serialnumber", serial)
        os.makedirs(p + "/configs/c.1")
        _write(p + "/configs/c.1/MaxPower", str(self.max_power_ma))
        function = p + "/functions/hid.usb0"
        os.makedirs(function)
        _write(function + "/protocol", str(self.protocol))
        _write(function + "/subclass", str(self.subclass))
        _write(function + "/report_length", str(self.report_length))
        _write(function + "/report_desc", self.report_desc)
        os.symlink(function, p + "/configs/c.1/hid.usb0")
        return self

    @staticmethod
    def remove_tree(path):
        """Removes a gadget's configfs tree (unbinding it first): configfs wants rmdir in reverse order."""
        try:
            if open(path + "/UDC").read().strip():
                _write(path + "/UDC", "\n")
        except OSError:
            pass
        for link in glob.glob(path + "/configs/*/*"):
            if os.path.islink(link):
                os.unlink(link)
        for d in glob.glob(path + "/configs/*/strings/*"):
            os.rmdir(d)
        for d in glob.glob(path + "/configs/*"):
            os.rmdir(d)
        for d in glob.glob(path + "/functions/*"):
            os.rmdir(d)
        for d in glob.glob(path + "/strings/*"):
            os.rmdir(d)
        os.rmdir(path)

    def remove(self):
        if self.bound:
            self.unplug()
        if os.path.exists(self.path):
            UsbHidGadget.remove_tree(self.path)

    # ---------------------------------------------------------------- the plug

    def hidg_node(self):
        """/dev/hidgN of the function (its dev attribute is MAJOR:MINOR), once it exists."""
        try:
            dev = open(self.path + "/functions/hid.usb0/dev").read().strip()
        except OSError:
            return None
        try:
            with open("/sys/dev/char/%s/uevent" % dev) as f:
                name = next((line.split("=", 1)[1].strip() for line in f if line.startswith("DEVNAME=")), None)
        except OSError:
            return None
        node = "/dev/" + name if name else None
        return node if node and os.path.exists(node) else None

    def plug(self, timeout_s=10):
        """Binds the gadget to dummy_udc.0 (plugs the device in), opens /dev/hidgN and starts the reader;
        returns the time of the bind."""
        t = monotonic()
        _write(self.path + "/UDC", UDC_NAME)
        self.bound = True
        node = _wait(self.hidg_node, timeout_s)
        if not node:
            raise RuntimeError("no /dev/hidgN for %s within %s s" % (self.name, timeout_s))
        self.node = node
        self.fd = os.open(node, os.O_RDWR | os.O_NONBLOCK)
        self.reading = True
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()
        return t

    def unplug(self):
        """Unbinds the UDC: the host sees the device go away. Returns the time just before the unbind."""
        self._stop_reader()
        t = monotonic()
        _write(self.path + "/UDC", "\n")
        self.unbind_s = monotonic() - t   # how long the unbind itself took (the gadget side's disconnect)
        self.bound = False
        return t

    def _stop_reader(self):
        self.reading = False
        if self.thread is not None:
            self.thread.join(2)
            self.thread = None
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def _read(self):
        fd = self.fd
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        while self.reading:
            try:
                events = poller.poll(50)
            except OSError as error:
                self.errors.append("poll: %r" % error)
                return
            if not events:
                continue
            try:
                data = os.read(fd, 64)
            except BlockingIOError:
                continue
            except OSError as error:
                self.errors.append("read: %r" % error)
                return
            t = monotonic()
            with self.lock:
                self.received.append((t, bytes(data)))

    # ---------------------------------------------------------------- reports

    def write_report(self, data, timeout_s=2.0):
        """Writes one input report; waits (poll POLLOUT) until f_hid took the previous one (the host polls the
        interrupt IN endpoint only while the HID device is open). Returns the time just before the write, or raises."""
        if self.fd is None:
            raise RuntimeError("the gadget is not plugged")
        poller = select.poll()
        poller.register(self.fd, select.POLLOUT)
        if not poller.poll(int(timeout_s * 1000)):
            raise TimeoutError("the host took no report for %.1f s" % timeout_s)
        t = monotonic()   # before the write: a loaded guest may deschedule us between the write and a later stamp
        os.write(self.fd, bytes(data))
        self.written.append((t, bytes(data)))
        return t

    def outputs(self, since=0.0):
        with self.lock:
            return [(t, d) for t, d in self.received if t >= since]

    def wait_output(self, predicate, since, timeout_s):
        """The first output report (time, bytes) after `since` that satisfies predicate, or None."""
        return _wait(lambda: next(((t, d) for t, d in self.outputs(since) if predicate(d)), None), timeout_s)

    # ---------------------------------------------------------------- the host side

    def hid_devices(self):
        """The host side's HID devices of this gadget: /sys/bus/hid/devices/0003:VVVV:PPPP.NNNN under dummy_hcd."""
        out = []
        for d in glob.glob("/sys/bus/hid/devices/0003:%04X:%04X.*" % (self.vendor, self.product)):
            if "dummy_hcd" in os.path.realpath(d):
                out.append(d)
        return sorted(out)

    def input_nodes(self):
        """/dev/input/eventN of the host side's input devices."""
        nodes = []
        for d in self.hid_devices():
            for event in glob.glob(d + "/input/input*/event*"):
                nodes.append("/dev/input/" + os.path.basename(event))
        return nodes

    def wait_input_node(self, timeout_s=10):
        return _wait(lambda: (self.input_nodes() or [None])[0], timeout_s)


def hex_bytes(data):
    return " ".join("%02x" % b for b in data)
