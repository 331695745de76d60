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
