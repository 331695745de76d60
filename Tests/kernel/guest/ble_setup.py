"""The BLE scenarios' set-up: the guest's system D-Bus, one bluetoothd managing both btvirt controllers
with its default configuration (EATT on), hci1 made an LE-only controller, and emulated BLE cars on it
(guest/ble_car.py). Everything started here is stopped by the scenario's cleanups."""
import os, signal, subprocess
import kharness as k
from bluez_scenario import BLUETOOTHD, ensure_controllers, prop, sh


class BLECar:
    """One ble_car.py process on hci1: its address, its CarLog, whether a central is connected."""

    def __init__(self, sc, mode, name, log_path, proc, addr):
        self.sc, self.mode, self.name, self.proc, self.addr = sc, mode, name, proc, addr
        self.log = k.CarLog(log_path)

    def connected_since(self, since):
        return bool(self.log.connections(since))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class BlueZ:
    """The system bus and bluetoothd (started once per scenario), hci0 the central, hci1 the cars' side."""

    def __init__(self, sc):
        self.sc = sc
        ensure_controllers(sc)
        os.makedirs("/run/dbus", exist_ok=True)
        os.makedirs("/var/lib/dbus", exist_ok=True)
        sh(sc, "dbus-uuidgen --ensure")
        if not os.path.exists("/run/dbus/system_bus_socket") or \
                subprocess.run(["dbus-send", "--system", "--print-reply", "--dest=org.freedesktop.DBus", "/",
                                "org.freedesktop.DBus.GetId"], capture_output=True, timeout=10).returncode != 0:
            p = sh(sc, "rm -f /run/dbus/pid; dbus-daemon --system --fork --print-pid")
            sc.require(p.returncode == 0, "dbus-daemon --system starts", p.stderr.strip())
            pid = int(p.stdout.split()[0])
            sc.cleanups.append(lambda: os.kill(pid, signal.SIGTERM))
        # hci1 is a BLE module: LE only (scenario 13 leaves it BR/EDR only); hci0 dual mode, as a laptop's
        for c in ("power off", "bredr off", "le on", "power on"):
            sh(sc, "timeout 20 btmgmt --index 1 " + c)
        sh(sc, "timeout 20 btmgmt --index 0 le on; timeout 20 btmgmt --index 0 power on")
        log = open(os.path.join(sc.work, "bluetoothd.log"), "w")
        self.bluetoothd = subprocess.Popen([BLUETOOTHD, "-n", "-d"], stdout=log, stderr=subprocess.STDOUT)
        sc.cleanups.append(self.stop_bluetoothd)
        up = k.wait_until(lambda: prop("/org/bluez/hci0", "org.bluez.Adapter1", "Powered") == "true"
                          and prop("/org/bluez/hci1", "org.bluez.Adapter1", "Powered") == "true", 30, 0.2)
        sc.require(up, "bluetoothd has hci0 and hci1 powered")
        self.central, self.car_addr = k.bdaddr("hci0"), k.bdaddr("hci1")
        self.cars = []

    def stop_bluetoothd(self):
        if self.bluetoothd.poll() is None:
            self.bluetoothd.terminate()
            try:
                self.bluetoothd.wait(5)
            except subprocess.TimeoutExpired:
                self.bluetoothd.kill()
                self.bluetoothd.wait()

    def start_car(self, mode, name, status_every=1.0):
        """ble_car.py on hci1 (`hm10` or `nus`), advertising `name`; returns its BLECar once registered."""
        work = self.sc.work
        log = os.path.join(work, "car-%s.log" % name)
        ready = os.path.join(work, "car-%s.ready" % name)
        if os.path.exists(ready):
            os.unlink(ready)
        proc = subprocess.Popen([k.PY, os.path.join(k.GUEST, "ble_car.py"), "--hci", "hci1", "--mode", mode,
                                 "--name", name, "--log", log, "--ready", ready, "--status-every", str(status_every)],
                                stdout=subprocess.DEVNULL, stderr=open(log + ".stderr", "w"))
        car = BLECar(self.sc, mode, name, log, proc, self.car_addr)
        self.sc.cleanups.append(car.stop)
        self.sc.require(k.wait_until(lambda: os.path.exists(ready) or proc.poll() is not None, 30, 0.1)
                        and proc.poll() is None,
                        "the %s car '%s' registers its GATT application and advertisement on hci1" % (mode, name),
                        open(log + ".stderr").read()[-300:])
        self.cars.append(car)
        return car

    def device_path(self, addr):
        return "/org/bluez/hci0/dev_" + addr.replace(":", "_")

    def disconnect_all(self):
        """Drops hci0's link to the car (between two arms or phases) and waits until it is gone."""
        path = self.device_path(self.car_addr)
        subprocess.run(["dbus-send", "--system", "--print-reply", "--dest=org.bluez", path,
                        "org.bluez.Device1.Disconnect"], capture_output=True, timeout=10)
        k.wait_until(lambda: prop(path, "org.bluez.Device1", "Connected") != "true", 10, 0.1)
