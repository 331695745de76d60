"""Joining by QR code (issue 32) in real browsers: what the page and the terminal's live view show decodes
(zbarimg) to the join URL; a phone (a fresh browser profile) that opens it drives; the spent URL is refused
to the next one and the code shown changes. With join = "per-turn" and a 2 s kiosk turn, the joined phone
loses its controls when the turn ends (the car gets E,0,0,0) and a new code is shown.

The kiosk's own screen is the suite's browser on 127.0.0.1 (view only, no cookie: the code is shown to
loopback connections); the phones are fresh Chromium profiles. Called from dashboard_test.py's main.
"""
import json, os, subprocess, time
import websocket  # python3-websocket
from harness import Car, Carbridge, free_port, wait_http
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

TOKEN = "join-token-0123456789"
QR_COLOURS = "\x1b[97;40m"   # RunView.joinColours
RESET = "\x1b[0m"


def _wait(driver, condition, timeout=5.0):
    try:
        WebDriverWait(driver, timeout, poll_frequency=0.05).until(lambda d: condition(d))
        return True
    except Exception:
        return False


def _body(driver, name):
    return driver.find_element(By.TAG_NAME, "body").get_attribute(name)


def _shown_url(driver):
    return driver.find_element(By.ID, "join-section").get_attribute("data-url") or ""


def zbar(path):
    """The text of the one code zbarimg finds in the image at `path` ("" if none)."""
    result = subprocess.run(["zbarimg", "--raw", "-q", path], capture_output=True, text=True, timeout=20)
    return result.stdout.strip()


def terminal_code(output):
    """From carbridge's pty output: the URL line and the QR block of the last screen that shows them."""
    text = output.decode("utf-8", errors="replace")
    for screen in reversed(text.split("\x1b[H\x1b[2J")):
        lines = screen.split("\r\n")
        urls = [line.split("Join from a phone: ", 1)[1].strip() for line in lines if "Join from a phone: " in line]
        block = [line.split(QR_COLOURS, 1)[1].split(RESET, 1)[0] for line in lines if QR_COLOURS in line]
        if urls and block:
            return urls[0], block
    return None, []


def write_pgm(block, path, scale=6):
    """The half-block lines as a greyscale image: each character is two modules (top, bottom), its ink the
    light ones (the terminal draws glyphs light on a dark background)."""
    rows = []
    for line in block:
        top = [ch in "█▀" for ch in line]
        bottom = [ch in "█▄" for ch in line]
        rows += [top, bottom]
    width = max(len(r) for r in rows)
    with open(path, "wb") as f:
        f.write(b"P5\n%d %d\n255\n" % (width * scale, len(rows) * scale))
        for row in rows:
            line = bytes(255 if (i < len(row) and row[i]) else 0 for i in range(width) for _ in range(scale))
            for _ in range(scale):
                f.write(line)


def external_ipv4s():
    """This machine's IPv4 addresses other than loopback (`ip -4 -o addr show up`)."""
    try:
        out = subprocess.run(["ip", "-4", "-o", "addr", "show", "up"], capture_output=True, text=True, timeout=5).stdout
    except Exception:
        return []
    return [f.split()[3].split("/")[0] for f in out.splitlines() if len(f.split()) > 3 and f.split()[1] != "lo"]


def join_message(address, port):
    """The first `join` message a view-only WebSocket connected to ADDRESS gets (None: none within 3 s)."""
    ws = websocket.create_connection("ws://%s:%d/ws" % (address, port), origin="http://%s:%d" % (address, port), timeout=3)
    try:
        end = time.monotonic() + 3
        while time.monotonic() < end:
            message = json.loads(ws.recv())
            if message.get("type") == "join":
                return message
    except Exception:
        return None
    finally:
        ws.close()
    return None


def _run(args, name, config_text, car, listen="127.0.0.1"):
    port = free_port()
    config = os.path.join(args.out, "join-%s.toml" % name)
    with open(config, "w") as f:
        f.write(config_text)
    cb = Carbridge(args.bin, ["--config", config, "--link", "tcp://127.0.0.1:%d" % car.port, "--dashboard", "%s:%d" % (listen, port)],
                   os.path.join(args.out, "join-%s.log" % name))
    return cb, "http://127.0.0.1:%d" % port, port


def join_part(args, driver, make_browser, checks):
    car = Car()
    phone = make_browser()
    stranger = make_browser()
    cb = None
    try:
        # --- join = "once": what is shown decodes to the URL; a phone joins; the spent URL is refused.
        # On a wildcard address when this machine has another one than loopback: the join URL is then that
        # address (getifaddrs), and a view-only browser connecting through it must not get the code.
        externals = external_ipv4s()
        # Plain HTTP (allow_http) keeps the phone's profile simple here; tls_part checks HTTPS.
        cb, base, port = _run(args, "once", '[dashboard]\ncontrols = true\ntoken = "%s"\njoin = "once"\nallow_http = true\n' % TOKEN, car,
                              listen="0.0.0.0" if externals else "127.0.0.1")
        join_base = "http://%s:%d" % (externals[0] if externals else "127.0.0.1", port)
        checks.check("join: dashboard up", wait_http(base + "/") == 200)
        car.wait(lambda c: c.connections >= 1 and len(c.texts()) >= 1)
        driver.get(base + "/")
        checks.check("join: the kiosk's screen (loopback) shows the code, at this machine's address",
                     _wait(driver, lambda d: _shown_url(d).startswith(join_base + "/join?code=")), _shown_url(driver))
        url = _shown_url(driver)
        if externals:
            far = join_message(externals[0], port)
            checks.check("join: a view-only browser from another address is not given the code",
                         far is not None and "url" not in far, str(far))
            near = join_message("127.0.0.1", port)
            checks.check("join: ... one on loopback is", near is not None and near.get("url") == url, str(near)[:120])
        else:
            print("SKIP join: no non-loopback IPv4 address: the view-only-elsewhere check needs one", flush=True)
        shot = os.path.join(args.out, "join-qr.png")
        driver.find_element(By.ID, "join-qr").screenshot(shot)
        decoded = zbar(shot)
        checks.check("join: the page's QR code decodes to the URL shown", decoded == url and len(url) > len(base + "/join?code="),
                     "%r vs %r" % (decoded, url))
        checks.check("join: the URL is written out under the code", driver.find_element(By.ID, "join-url").text == url)
        end = time.monotonic() + 5
        shown, block = terminal_code(bytes(cb.output))
        while shown != url and time.monotonic() < end:
            time.sleep(0.1)
            shown, block = terminal_code(bytes(cb.output))
        pgm = os.path.join(args.out, "join-terminal.pgm")
        if block:
            write_pgm(block, pgm)
        decoded = zbar(pgm) if block else ""
        checks.check("join: the live view's URL line is the page's", shown == url, "%r vs %r" % (shown, url))
        checks.check("join: the live view's QR code (half blocks) decodes to the URL", decoded == url, "%r (%d lines)" % (decoded, len(block)))

        phone.get(url)
        checks.check("join: the phone lands on the driver's page, a driver with controls",
                     _wait(phone, lambda d: _body(d, "data-controls") == "true" and _body(d, "data-role") == "driver")
                     and phone.current_url.endswith("/drive"), "%s %s" % (phone.current_url, _body(phone, "data-role")))
        cookie = {c["name"]: c for c in phone.get_cookies()}.get("carbridge_session", {})
        checks.check("join: its session cookie is HttpOnly SameSite=Strict",
                     cookie.get("httpOnly") is True and cookie.get("sameSite") == "Strict", str(cookie))
        start = len(car.texts())
        phone.find_element(By.ID, "btn-engine").click()
        time.sleep(0.2)
        phone.find_element(By.ID, "btn-speed-up").click()
        checks.check("join: the phone's Engine and Speed+ reach the car",
                     car.wait(lambda c: "M,0,10,1" in c.texts()[start:], 3), str(car.texts()[start:][-4:]))
        checks.check("join: the kiosk's screen shows the next code",
                     _wait(driver, lambda d: _shown_url(d) not in ("", url)), _shown_url(driver))
        stranger.get(url)
        body = stranger.find_element(By.TAG_NAME, "body").text
        checks.check("join: the spent URL is refused to the next browser", "already used" in body, body[:120])
        stranger.get(base + "/")
        checks.check("join: ... which gets no controls",
                     _wait(stranger, lambda d: _body(d, "data-controls") == "false"), _body(stranger, "data-controls"))
        checks.check("join: a view-only browser on this machine (as the kiosk's screen is) is shown the code",
                     _wait(stranger, lambda d: _shown_url(d).startswith(join_base)), _shown_url(stranger))
        cb.stop()
        cb = None

        # --- join = "per-turn": the phone drives one 2 s turn, then loses its controls; a new code is shown.
        phone.delete_all_cookies()
        cb, base, port = _run(args, "per-turn",
                        '[kiosk]\nsession_limit_s = 2\n[dashboard]\ncontrols = true\ntoken = "%s"\njoin = "per-turn"\n' % TOKEN, car)
        wait_http(base + "/")
        car.wait(lambda c: c.connections >= 2)
        driver.get(base + "/")
        _wait(driver, lambda d: _shown_url(d).startswith(base + "/join?code="))
        url = _shown_url(driver)
        phone.get(url)
        ok = _wait(phone, lambda d: _body(d, "data-controls") == "true")
        start = len(car.texts())
        phone.find_element(By.ID, "btn-engine").click()
        time.sleep(0.2)
        phone.find_element(By.ID, "btn-speed-up").click()
        checks.check("per-turn: the joined phone starts the engine and drives",
                     ok and car.wait(lambda c: "M,0,10,1" in c.texts()[start:], 3), str(car.texts()[start:][-4:]))
        after_join = _shown_url(driver)
        checks.check("per-turn: the turn's end stops the car (E,0,0,0)",
                     car.wait(lambda c: "E,0,0,0" in c.texts()[start:], 4), str(car.texts()[start:][-4:]))
        checks.check("per-turn: the phone's controls are taken at the turn's end, and it is told why",
                     _wait(phone, lambda d: _body(d, "data-controls") == "false", 3)
                     and _wait(phone, lambda d: "your turn is over" in d.find_element(By.ID, "why").text, 2),
                     "%s: %s" % (_body(phone, "data-controls"), phone.find_element(By.ID, "why").text))
        checks.check("per-turn: a new code is shown for the next turn",
                     _wait(driver, lambda d: _shown_url(d) not in ("", url, after_join), 3), "%s / %s" % (after_join, _shown_url(driver)))
        before = len(car.texts())
        refusals = int(_body(phone, "data-rejections") or 0)
        phone.execute_script("send({c: 'engine'})")
        time.sleep(0.4)
        checks.check("per-turn: the phone's Engine after its turn is refused",
                     int(_body(phone, "data-rejections") or 0) > refusals and "E,1" not in "".join(car.texts()[before:])
                     and not any(t.startswith("M,0,10") for t in car.texts()[before:]),
                     "%s; rejections %s" % (car.texts()[before:][-3:], _body(phone, "data-rejections")))
    finally:
        if cb:
            cb.stop()
        phone.quit()
        stranger.quit()
        car.close()
