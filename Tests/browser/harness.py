"""Shared helpers for the dashboard's browser tests: a listening car, carbridge on a pty, checks."""
import os, pty, select, socket, subprocess, threading, time, fcntl, termios, struct, urllib.request


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Car:
    """A TCP car on 127.0.0.1: accepts connections, records every line (time, text, connection)."""

    def __init__(self, port=0):
        self.lines = []
        self.lock = threading.Lock()
        self.connections = 0
        self.client = None
        self.running = True
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", port))
        self.listener.listen(4)
        self.port = self.listener.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        clients = {}
        while self.running:
            fds = [self.listener] + list(clients)
            try:
                ready, _, _ = select.select(fds, [], [], 0.05)
            except (OSError, ValueError):
                break
            for fd in ready:
                if fd is self.listener:
                    try:
                        conn, _ = self.listener.accept()
                    except OSError:
                        continue
                    with self.lock:
                        self.connections += 1
                        self.client = conn
                        clients[conn] = [self.connections, b""]
                    continue
                try:
                    data = fd.recv(4096)
                except OSError:
                    data = b""
                if not data:
                    clients.pop(fd, None)
                    fd.close()
                    continue
                now = time.monotonic()
                entry = clients[fd]
                entry[1] += data
                while b"\n" in entry[1]:
                    line, entry[1] = entry[1].split(b"\n", 1)
                    with self.lock:
                        self.lines.append((now, line.decode(errors="replace"), entry[0]))
        for fd in clients:
            fd.close()

    def say(self, text):
        with self.lock:
            client = self.client
        client.sendall(text.encode())

    def texts(self, connection=None):
        with self.lock:
            return [t for (_, t, c) in self.lines if connection is None or c == connection]

    def timed(self):
        with self.lock:
            return list(self.lines)

    def close(self):
        self.running = False
        self.thread.join(2)
        try:
            self.listener.close()
        except OSError:
            pass
        with self.lock:
            if self.client:
                try:
                    self.client.shutdown(socket.SHUT_RDWR)
                    self.client.close()
                except OSError:
                    pass

    def wait(self, condition, timeout=10.0):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if condition(self):
                return True
            time.sleep(0.02)
        return condition(self)


class Carbridge:
    """`carbridge run …` on a pseudo-terminal (its keyboard drive needs one); stderr to a file."""

    def __init__(self, binary, args, log_path):
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        self.log = open(log_path, "w")
        self.process = subprocess.Popen(
            [binary, "run"] + args, stdin=slave, stdout=slave, stderr=self.log, start_new_session=True,
            env=dict(os.environ, TERM="xterm"))
        os.close(slave)
        self.output = bytearray()
        self.running = True
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self):
        while self.running:
            try:
                ready, _, _ = select.select([self.master], [], [], 0.1)
                if ready:
                    data = os.read(self.master, 65536)
                    if not data:
                        break
                    self.output += data
            except OSError:
                break

    def type(self, keys, pause=0.15):
        os.write(self.master, keys.encode())
        time.sleep(pause)

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.running = False
        time.sleep(0.15)
        try:
            os.close(self.master)
        except OSError:
            pass
        self.log.close()


def wait_http(url, timeout=10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with urllib.request.urlopen(url, timeout=1) as response:
                return response.status
        except Exception:
            time.sleep(0.05)
    return None


class Checks:
    """PASS/FAIL lines and the final `N passed, N failed`."""

    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, name, ok, detail=""):
        if ok:
            self.passed += 1
            print(f"PASS {name}" + (f" ({detail})" if detail else ""), flush=True)
        else:
            self.failed += 1
            print(f"FAIL {name}" + (f": {detail}" if detail else ""), flush=True)
        return ok


def distinct_runs(texts):
    out = []
    for t in texts:
        if not out or out[-1] != t:
            out.append(t)
    return out


class Hand:
    """A hand holding the phone: the page's orientation through a CDP connection of its own (so a thread can
    keep it trembling while Selenium drives the page), with a tremor: α moves by 0.4° every 40 ms. The page
    ignores α, and Chrome fires `deviceorientation` only when an angle moved by 0.1° or more, so without the
    tremor a steady override is a sensor that fired once and went silent. `still()` stops the events (a phone
    in a stand, or a sensor that died) while the orientation stays; `tremble()` starts them again."""

    def __init__(self, driver, beta=0.0, gamma=0.0):
        import websocket  # python3-websocket
        address = driver.capabilities["goog:chromeOptions"]["debuggerAddress"]
        # chromedriver's window handles are the DevTools target ids.
        self.ws = websocket.create_connection("ws://%s/devtools/page/%s" % (address, driver.current_window_handle), timeout=5,
                                              suppress_origin=True)
        self.lock = threading.Lock()
        self.ids = 0
        self.beta, self.gamma, self.alpha = beta, gamma, 0.0
        self.trembling = True
        self.running = True
        self.set(beta, gamma)
        self.thread = threading.Thread(target=self._tremble, daemon=True)
        self.thread.start()

    def _call(self, method, params):
        import json
        with self.lock:
            self.ids += 1
            self.ws.send(json.dumps({"id": self.ids, "method": method, "params": params}))
            while True:  # the answer (events are not enabled on this session)
                if json.loads(self.ws.recv()).get("id") == self.ids:
                    return

    def _send(self):
        self._call("DeviceOrientation.setDeviceOrientationOverride", {"alpha": self.alpha, "beta": self.beta, "gamma": self.gamma})

    def set(self, beta, gamma):
        """The phone turned to (β, γ): sent at once."""
        self.beta, self.gamma = beta, gamma
        self._send()

    def _tremble(self):
        while self.running:
            time.sleep(0.04)
            if self.running and self.trembling:
                self.alpha = 0.4 if self.alpha == 0 else 0.0
                try:
                    self._send()
                except Exception:
                    return

    def still(self):
        self.trembling = False
        time.sleep(0.06)

    def tremble(self):
        self.trembling = True

    def close(self):
        self.running = False
        self.thread.join(1)
        try:
            self._call("DeviceOrientation.clearDeviceOrientationOverride", {})
        except Exception:
            pass
        self.ws.close()


def drop_car_link(car):
    """The car's end of the link goes away (a reset, a radio drop): its current connection is shut."""
    with car.lock:
        client = car.client
    if client:
        try:
            client.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
