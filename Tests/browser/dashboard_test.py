#!/usr/bin/python3
"""The dashboard in a real browser (headless Chromium through Selenium), its security checks over raw
HTTP/WebSocket, /metrics through a Prometheus text parser, the hands-free rider panel (rider_panel.py),
joining by QR code (join_part.py),
and the stream's jitter with 0 and 5 browsers connected. Prints PASS/FAIL lines and `N passed, N failed`.

Usage: /usr/bin/python3 Tests/browser/dashboard_test.py --bin .build/debug/carbridge --out DIR [--screenshot docs/dashboard.png]
"""
import argparse, json, math, os, re, shutil, statistics, sys, threading, time, urllib.request, urllib.error

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Car, Carbridge, Checks, distinct_runs, free_port, wait_http
from rider_panel import rider_panel_part
from status_part import status_part
from join_part import join_part
from phone_part import phone_part
from driver_part import driver_part
from tls_part import tls_part
from hostile_part import hostile_part

import websocket  # python3-websocket
from prometheus_client.parser import text_string_to_metric_families  # python3-prometheus-client
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

TOKEN = "s3cret-token-0123456789"
RIGHT = "\x1b[C"
checks = Checks()


def browser():
    options = Options()
    options.binary_location = "/usr/bin/chromium"
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,1100"]:
        options.add_argument(flag)
    # The console, for the Content-Security-Policy violations hostile_part looks for.
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def wait_for(driver, condition, timeout=5.0):
    try:
        WebDriverWait(driver, timeout, poll_frequency=0.05).until(lambda d: condition(d))
        return True
    except Exception:
        return False


def attr(driver, element_id, name):
    return driver.find_element(By.ID, element_id).get_attribute(name)


def text(driver, element_id):
    return driver.find_element(By.ID, element_id).text


def wheel_rotation(driver):
    """The wheel's rotation in degrees, from its computed CSS transform matrix."""
    matrix = driver.execute_script("return getComputedStyle(document.getElementById('wheel')).transform")
    if not matrix or matrix == "none":
        return 0.0
    a, b = [float(x) for x in matrix[matrix.index("(") + 1:-1].split(",")[:2]]
    return math.degrees(math.atan2(b, a))


def click(driver, element_id, pause=0.25):
    driver.find_element(By.ID, element_id).click()
    time.sleep(pause)


def write_config(path, controls, token=None):
    with open(path, "w") as f:
        f.write("[dashboard]\ncontrols = %s\n" % ("true" if controls else "false"))
        if token:
            f.write('token = "%s"\n' % token)


def view_only_part(args, driver):
    """Engine off, connected/disconnected with the countdown and reason, keyboard steering, car lines."""
    car = Car()
    port = free_port()
    cb = Carbridge(args.bin, ["--link", "tcp://127.0.0.1:%d" % car.port, "--dashboard", "127.0.0.1:%d" % port],
                   os.path.join(args.out, "view-only.log"))
    try:
        base = "http://127.0.0.1:%d" % port
        checks.check("server up", wait_http(base + "/") == 200)
        car.wait(lambda c: c.connections == 1)
        driver.get(base + "/")
        checks.check("page shows engine off", wait_for(driver, lambda d: attr(d, "engine", "data-on") == "false")
                     and text(driver, "engine") == "OFF")
        checks.check("page shows connected", wait_for(driver, lambda d: attr(d, "link", "data-state") == "up")
                     and text(driver, "link") == "connected", text(driver, "link"))
        checks.check("view only: no controls shown", attr(driver, "controls-section", "class") == "hidden")
        checks.check("view only: no Bluetooth search shown", attr(driver, "bt-section", "class") == "hidden")
        # Keyboard steering (the terminal) turns the wheel.
        cb.type(RIGHT)
        cb.type(RIGHT)
        ok = wait_for(driver, lambda d: abs(wheel_rotation(d) - 40) < 0.5)
        checks.check("keyboard steering turns the wheel to +40°", ok, "rotation %.1f°, range %s" % (wheel_rotation(driver), text(driver, "range")))
        checks.check("range A shown", text(driver, "range") == "A 1")
        # The car's lines appear in the terminal, with wall-clock times.
        car.say("BAT 7.4V\nCAR stopped\n")
        ok = wait_for(driver, lambda d: "CAR stopped" in text(d, "car"))
        car_text = text(driver, "car")
        checks.check("car lines appear with times", ok and re.search(r"\d\d:\d\d:\d\d\.\d\d\d\s*BAT 7\.4V", car_text) is not None, car_text)
        checks.check("inputs in use shown", "keyboard" in text(driver, "inputs"), text(driver, "inputs"))
        checks.check("last frames shown", "E,0,0,0" in text(driver, "frames"), text(driver, "frames"))
        os.makedirs(args.out, exist_ok=True)
        driver.save_screenshot(os.path.join(args.out, "dashboard-connected.png"))
        # The car goes away: down, the reason and the back-off countdown.
        car.close()
        ok = wait_for(driver, lambda d: attr(d, "link", "data-state") == "down", 5)
        link_text = text(driver, "link")
        reason = text(driver, "link-reason")
        checks.check("page shows disconnected with the countdown and the reason",
                     ok and re.search(r"retry in \d+\.\d s", link_text) is not None and reason != "",
                     "%r / %r" % (link_text, reason))
        driver.save_screenshot(os.path.join(args.out, "dashboard-down.png"))
    finally:
        cb.stop()
        car.close()


def controls_part(args, driver):
    """With the token: Engine, Speed+ ×2, Gear, F3 → exactly the protocol's frames; metrics; closing the
    tab while steering stops the car. Without it: refused. Security over raw HTTP/WebSocket."""
    config = os.path.join(args.out, "controls.toml")
    write_config(config, controls=True, token=TOKEN)
    car = Car()
    port = free_port()
    cb = Carbridge(args.bin, ["--config", config, "--link", "tcp://127.0.0.1:%d" % car.port, "--dashboard", "127.0.0.1:%d" % port,
                              "--no-keyboard"], os.path.join(args.out, "controls.log"))
    base = "http://127.0.0.1:%d" % port
    try:
        wait_http(base + "/")
        car.wait(lambda c: c.connections == 1 and len(c.texts()) >= 1)
        # --- without the token: the buttons are there, clicks change nothing, the server refuses them.
        driver.get(base + "/")
        wait_for(driver, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-controls") == "false")
        checks.check("without the token: login form shown", "hidden" not in attr(driver, "login", "class"))
        before = len(car.texts())
        click(driver, "btn-engine")
        click(driver, "btn-speed-up")
        ok = wait_for(driver, lambda d: "refused by carbridge" in text(d, "rejections"))
        time.sleep(0.3)
        checks.check("without the token: clicks send nothing to the car", len(car.texts()) == before, str(car.texts()[before:]))
        checks.check("without the token: the server refused them", ok, text(driver, "rejections"))
        checks.check("without the token: engine still off", attr(driver, "engine", "data-on") == "false")
        refused = int(driver.find_element(By.TAG_NAME, "body").get_attribute("data-rejections") or 0)
        click(driver, "bt-scan")
        ok = wait_for(driver, lambda d: int(d.find_element(By.TAG_NAME, "body").get_attribute("data-rejections") or 0) > refused, 2)
        checks.check("without the token: the Bluetooth search is refused", ok and attr(driver, "bt-status", "data-phase") == "idle",
                     text(driver, "rejections"))
        # --- with the token (once), then the cookie.
        driver.get(base + "/?token=" + TOKEN)
        cookies = {c["name"]: c for c in driver.get_cookies()}
        session = cookies.get("carbridge_session", {})
        checks.check("token → HttpOnly SameSite=Strict cookie", session.get("httpOnly") is True and session.get("sameSite") == "Strict",
                     str(session))
        checks.check("token not left in the address", "token" not in driver.current_url, driver.current_url)
        checks.check("with the token: controls enabled",
                     wait_for(driver, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-controls") == "true"))
        # The Bluetooth search through bluetoothd: none runs here (nor in CI), so the page says so, as `scan` does.
        click(driver, "bt-scan", pause=0)
        ok = wait_for(driver, lambda d: attr(d, "bt-status", "data-phase") in ("failed", "finished"), 3)
        status = text(driver, "bt-status")
        checks.check("with the token: Bluetooth search says bluetoothd is missing",
                     ok and attr(driver, "bt-status", "data-phase") == "failed"
                     and ("D-Bus system bus" in status or "bluetoothd is not running" in status), status)
        start = len(car.texts())
        for button in ["btn-engine", "btn-speed-up", "btn-speed-up", "btn-gear", "btn-f3"]:
            click(driver, button)
        time.sleep(0.3)
        sent = car.texts()[start:]
        expected = ["M,0,10,1", "M,0,20,1", "B,0,20,0", "H,0,20,0", "B,0,20,0"]
        checks.check("Engine, Speed+ ×2, Gear, F3 send exactly the protocol's frames", distinct_runs(sent) == expected,
                     "distinct %s" % distinct_runs(sent))
        checks.check("the handshake was the first frame", car.texts()[0] == "E,0,0,0", car.texts()[0])
        checks.check("page shows engine on, 20, reverse",
                     wait_for(driver, lambda d: text(d, "engine") == "ON" and text(d, "speed") == "20" and text(d, "gear") == "REVERSE"))
        # The events the pad's rumble plays are listed too (issue 19): here the engine going on.
        ok = wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#feedback li[data-event=engineOn]"))
        checks.check("pad feedback: the engine going on is listed with its time", ok
                     and re.search(r"\d\d:\d\d:\d\d\.\d\d\d\s*engine on", text(driver, "feedback")) is not None,
                     text(driver, "feedback"))
        # --- /metrics after the scripted drive, through a Prometheus text parser.
        with urllib.request.urlopen(base + "/metrics") as response:
            body = response.read().decode()
        values = {}
        for family in text_string_to_metric_families(body):
            for sample in family.samples:
                key = sample.name + ("{" + ",".join("%s=%s" % kv for kv in sorted(sample.labels.items())) + "}" if sample.labels else "")
                values[key] = sample.value
        received = car.texts()
        by_type = {}
        for t in received:
            by_type[t[0]] = by_type.get(t[0], 0) + 1
        # The stream keeps going while we read: compare against what had arrived, allowing one in flight.
        frames_ok = all(abs(values.get("carbridge_frames_sent_total{type=%s}" % k, -1) - v) <= 2 for k, v in by_type.items())
        checks.check("metrics: frames sent by type match the car's", frames_ok,
                     "car %s / metrics %s" % (by_type, {k: v for k, v in values.items() if k.startswith("carbridge_frames_sent_total") and v}))
        checks.check("metrics: 1 handshake, engine on, speed 20, link up, 0 reconnects",
                     values.get("carbridge_handshakes_total") == 1 and values.get("carbridge_engine_on") == 1
                     and values.get("carbridge_speed") == 20 and values.get("carbridge_link_up") == 1
                     and values.get("carbridge_link_reconnects_total") == 0 and values.get("carbridge_link_state{state=up}") == 1,
                     str({k: v for k, v in values.items() if not k.startswith("carbridge_frames")}))
        checks.check("metrics: the refused clicks were counted", values.get("carbridge_dashboard_rejected_messages_total", 0) >= 2)
        # --- security over raw HTTP and WebSocket.
        security_checks(base, port)
        # --- closing the tab while steering stops the car.
        driver.switch_to.new_window("tab")
        driver.get(base + "/")
        wait_for(driver, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-controls") == "true")
        driver.execute_script("const s=document.getElementById('steer'); s.value=40; s.dispatchEvent(new Event('input'));")
        ok = car.wait(lambda c: c.texts()[-1].startswith("Y,1,20,0"), 3)
        checks.check("the slider steers (Y,1,20,0)", ok, car.texts()[-1])
        closed_at = time.monotonic()
        driver.close()
        driver.switch_to.window(driver.window_handles[0])
        ok = car.wait(lambda c: c.texts()[-1] == "Y,1,0,0", 3)
        stop_time = next((t for (t, line, _) in car.timed() if t >= closed_at and line == "Y,1,0,0"), None)
        checks.check("closing the tab while steering stops the car", ok,
                     "stop frame %.0f ms after the close" % ((stop_time - closed_at) * 1000) if stop_time else car.texts()[-3:])
        ok = wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#feedback li[data-event=stopped]"))
        checks.check("pad feedback: the input-lost stop is listed", ok, text(driver, "feedback"))
        with urllib.request.urlopen(base + "/metrics") as response:
            lost = [s.value for f in text_string_to_metric_families(response.read().decode()) for s in f.samples
                    if s.name == "carbridge_input_lost_stops_total"]
        checks.check("metrics: the input-lost stop was counted", lost == [1], str(lost))
        # A screenshot of the page with controls for the README.
        car.say("CAR backward-right at 0\nBAT 7.4V\n")
        driver.get(base + "/")
        wait_for(driver, lambda d: attr(d, "link", "data-state") == "up")
        time.sleep(0.3)
        driver.save_screenshot(os.path.join(args.out, "dashboard-controls.png"))
    finally:
        cb.stop()
        car.close()


def security_checks(base, port):
    host = "127.0.0.1:%d" % port
    url = "ws://%s/ws" % host
    # A foreign Origin is refused with the reason.
    try:
        websocket.create_connection(url, origin="http://evil.example", timeout=3)
        checks.check("foreign Origin refused", False, "upgraded")
    except websocket.WebSocketBadStatusException as error:
        with urllib.request.urlopen(base + "/metrics") as response:
            refused = [s.value for f in text_string_to_metric_families(response.read().decode()) for s in f.samples
                       if s.name == "carbridge_dashboard_refused_upgrades_total"]
        checks.check("foreign Origin refused (no upgrade, 400, counted)", error.status_code == 400 and refused == [1],
                     "%s, refused %s" % (error.status_code, refused))
    # Without the cookie: view only, controls refused with the reason.
    ws = websocket.create_connection(url, origin="http://" + host, timeout=3)
    hello = json.loads(ws.recv())
    checks.check("no cookie: view only", hello.get("type") == "hello" and hello.get("controls") is False, str(hello))
    ws.send(json.dumps({"c": "engine"}))
    reply = next_of_type(ws, "rejected")
    checks.check("no cookie: a control is rejected with a reason", reply and "token" in reply["reason"], str(reply))
    ws.send(json.dumps({"c": "bt_pick", "addr": "98:D3:31:F5:2A:11"}))
    reply = next_of_type(ws, "rejected")
    checks.check("no cookie: a Bluetooth pick is rejected with a reason", reply and "token" in reply["reason"], str(reply))
    ws.close()
    # With a session: bad and oversized messages are rejected with a reason.
    opener = urllib.request.build_opener(NoRedirect())
    try:
        opener.open(urllib.request.Request(base + "/login", data=("token=" + TOKEN).encode(), method="POST"))
        cookie_header = ""
    except urllib.error.HTTPError as response:
        cookie_header = response.headers.get("Set-Cookie", "")
    checks.check("POST /login sets an HttpOnly SameSite=Strict cookie",
                 "HttpOnly" in cookie_header and "SameSite=Strict" in cookie_header and TOKEN not in cookie_header, cookie_header)
    try:
        opener.open(urllib.request.Request(base + "/login", data=b"token=wrong-token-000000", method="POST"))
        status = 200
    except urllib.error.HTTPError as response:
        status = response.code
    checks.check("a wrong token is refused", status == 403, str(status))
    cookie = cookie_header.split(";")[0]
    ws = websocket.create_connection(url, origin="http://" + host, cookie=cookie, timeout=3)
    hello = json.loads(ws.recv())
    checks.check("session cookie: controls", hello.get("controls") is True, str(hello))
    for bad, expect in [("engine", "not a flat JSON object"), ('{"c":"shutdown"}', "unknown control"),
                        ('{"c":"steer","deg":500}', "−90…90"), ('{"c":"f","n":9}', "1…5"),
                        ('{"c":"engine"}' + " " * 300, "message too long"), ("x" * 10000, "message too long (10000 bytes")]:
        ws.send(bad)
        reply = next_of_type(ws, "rejected")
        checks.check("bad message rejected: %s" % expect, reply is not None and expect in reply["reason"], str(reply))
    ws.send("x" * 20000)
    code = None
    ws.settimeout(3)
    try:
        while True:
            opcode, data = ws.recv_data(control_frame=True)
            if opcode == websocket.ABNF.OPCODE_CLOSE:
                code = int.from_bytes(data[:2], "big") if len(data) >= 2 else None
                break
    except ConnectionResetError:
        code = "reset"  # the close frame (1009) raced the reset for the unread rest of the message
    except Exception as error:
        code = repr(error)
    checks.check("a message over the 16 KiB frame limit closes the connection", code in (1009, "reset"), str(code))


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def next_of_type(ws, kind, timeout=3.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        ws.settimeout(max(0.05, end - time.monotonic()))
        try:
            message = json.loads(ws.recv())
        except Exception:
            return None
        if message.get("type") == kind:
            return message
    return None


def jitter_part(args):
    """Stream intervals at the car, 3 s with no browser and 3 s with five connected (each receiving 20
    states a second and pinging): the web side must not stop the loop. The intervals are reported, not judged."""
    config = os.path.join(args.out, "jitter.toml")
    write_config(config, controls=True)
    car = Car()
    port = free_port()
    cb = Carbridge(args.bin, ["--config", config, "--link", "tcp://127.0.0.1:%d" % car.port, "--dashboard", "127.0.0.1:%d" % port],
                   os.path.join(args.out, "jitter.log"))
    results = {}
    clients = []
    stop = threading.Event()
    try:
        wait_http("http://127.0.0.1:%d/" % port)
        car.wait(lambda c: c.connections == 1)
        cb.type("e")
        cb.type("+")

        def measure(label):
            t0 = time.monotonic()
            time.sleep(3)
            lines = [(t, s) for (t, s, _) in car.timed() if t >= t0 and s == "M,0,10,1"]
            intervals = [(b[0] - a[0]) * 1000 for a, b in zip(lines, lines[1:])]
            intervals.sort()
            if not intervals:   # no stream at all: the check below fails on the count
                results[label] = (0, float("nan"), float("nan"), float("nan"))
                return
            results[label] = (len(intervals), statistics.median(intervals), intervals[max(0, int(len(intervals) * 0.99) - 1)], intervals[-1])

        measure("0 browsers")
        received = [0] * 5

        def client(index):
            ws = websocket.create_connection("ws://127.0.0.1:%d/ws" % port, origin="http://127.0.0.1:%d" % port, timeout=5)
            clients.append(ws)
            last_ping = 0
            while not stop.is_set():
                try:
                    ws.settimeout(0.05)
                    ws.recv()
                    received[index] += 1
                except Exception:
                    pass
                if time.monotonic() - last_ping > 0.25:
                    last_ping = time.monotonic()
                    try:
                        ws.send('{"c":"ping"}')
                    except Exception:
                        return

        threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(5)]
        for t in threads:
            t.start()
        time.sleep(0.5)
        before = list(received)
        measure("5 browsers")
        per_second = [(after - b) / 3.0 for b, after in zip(before, received)]
        stop.set()
        for t in threads:
            t.join(2)
        for label, (count, p50, p99, worst) in results.items():
            print("jitter: %-10s %3d intervals  p50 %.1f ms  p99 %.1f ms  max %.1f ms" % (label, count, p50, p99, worst), flush=True)
            tag = label.split()[0]
            for name, value in (("p50", p50), ("p99", p99), ("max", worst)):
                print("METRIC stream_interval_%s_%s_browsers %.1f ms" % (name, tag, value), flush=True)
        print("jitter: states received per browser per second: %s" % ", ".join("%.1f" % r for r in per_second), flush=True)
        print("METRIC states_per_browser_per_second_min %.1f" % min(per_second), flush=True)
        # The intervals are wall-clock figures, which a loaded machine moves (p99 72 ms was seen on a busy
        # 2-core host): they are METRIC lines above. Judged: the stream went on while five browsers were
        # served, and the per-browser rate limit, which load can only lower.
        five = results["5 browsers"]
        checks.check("stream with 5 browsers connected: the car keeps receiving the repeated frame",
                     five[0] >= 10, "%d intervals in 3 s" % five[0])
        checks.check("each browser gets states, at most 20 a second", all(0 < r <= 21 for r in per_second),
                     str(per_second))
    finally:
        stop.set()
        for ws in clients:
            try:
                ws.close()
            except Exception:
                pass
        cb.stop()
        car.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--screenshot", help="also copy the controls screenshot here (docs/dashboard.png)")
    parser.add_argument("--axe", help="axe-core's axe.min.js (run.sh fetches it from PyPI's axe-selenium-python)")
    parser.add_argument("--only", help="run only these parts (comma-separated function names), for working on one")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    driver = browser()
    try:
        only = set(args.only.split(",")) if args.only else None
        wanted = lambda name: only is None or name in only
        for part in (view_only_part, controls_part):
            if not wanted(part.__name__):
                continue
            try:
                part(args, driver)
            except Exception as error:
                checks.check(part.__name__, False, "%s: %s" % (type(error).__name__, error))
        if wanted("rider_panel_part"):
            rider_panel_part(args, driver, checks)   # issue 16: the hands-free rider panel
        if wanted("status_part"):
            status_part(args, driver, checks)        # issue 32: the car's status and the low-battery warning
        if wanted("join_part"):
            join_part(args, driver, browser, checks)   # issue 32: joining by QR code
        if wanted("phone_part"):
            phone_part(args, driver, checks)   # issues 32 and 38: a phone drives (tilt, stick, safety)
        if wanted("driver_part"):
            driver_part(args, driver, browser, checks)   # issue 38: the driver's page, roles, one screen, axe
        if wanted("tls_part"):
            tls_part(args, checks)   # issue 32: HTTPS (its own browser)
        if wanted("hostile_part"):
            try:
                hostile_part(args, browser, checks)   # issue 41: a flood, guessing loops, malformed requests, the headers
            except Exception as error:
                import traceback
                traceback.print_exc()
                checks.check("hostile_part", False, "%s: %s" % (type(error).__name__, error))
    finally:
        driver.quit()
    if wanted("jitter_part"):
        try:
            jitter_part(args)
        except Exception as error:
            checks.check("jitter", False, "%s: %s" % (type(error).__name__, error))
    shot = os.path.join(args.out, "dashboard-controls.png")
    if args.screenshot and os.path.exists(shot):
        shutil.copy(shot, args.screenshot)
    print("%d passed, %d failed" % (checks.passed, checks.failed), flush=True)
    return 0 if checks.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
