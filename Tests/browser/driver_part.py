"""The driver's page (issue 38) as a visitor gets it: a phone (another browser profile, a mobile user agent,
touch, device metrics) scans the kiosk's join code and lands on /drive. Checked:

- the roles: the join makes a driver, whose `bt_scan` and `bt_pick` are refused with sentences, whose
  connection never receives a join code, and whose messages leave the config file byte for byte as it was;
  the operator's (the token's) still work;
- installable: the manifest (full screen) and its icon, as Chromium reads them (Page.getAppManifest);
- accessibility: axe-core in the real browser on the driver's and the operator's page, no serious or
  critical violation;
- the exact frames the car receives from the page's controls: tilt, Speed±, Gear, F1–F5, Engine, the stick;
- every stop says why where the driver looks (#why): a sensor gone silent while driving at speed (the stop
  frame within 1 s), the link dropped by the car, the engine turned off elsewhere, a tap on a control the
  engine being off disables; each stop or refusal vibrates;
- the Screen Wake Lock requested when driving starts and released when it stops, full screen from the first
  tap (the calls recorded by wrappers installed before the page loads);
- one screen: at 360×640, 390×844, 412×915 and 768×1024, portrait and landscape, in tilt and in stick mode,
  no horizontal scroll, the document no taller than the viewport, every control inside it, tap targets at
  least 44×44 CSS px; a screenshot of each in the artifacts.

Called from dashboard_test.py's main with the shared browser (the operator, the kiosk's screen) and a
factory for the phone's.
"""
import json, os, time, urllib.request
import websocket  # python3-websocket
from harness import Car, Carbridge, Hand, distinct_runs, drop_car_link, free_port, wait_http
from phone_part import ANDROID, _drag, _motion, _poll, _wait
from selenium.webdriver.common.by import By

TOKEN = "driver-token-0123456789"
SIZES = [(360, 640), (390, 844), (412, 915), (768, 1024)]
# Installed before the page's own script: the calls the page makes, counted (a headless browser may refuse the
# real wake lock: the page's request is what is checked, and its release of what it got).
RECORDER = """
window.__calls = { wake: 0, wakeRelease: 0, wakeGranted: 0, vibrate: 0, fullscreen: 0 };
if (navigator.wakeLock) {
  const request = navigator.wakeLock.request.bind(navigator.wakeLock);
  const counted = (lock) => { const release = lock.release.bind(lock); lock.release = () => { window.__calls.wakeRelease++; return release(); }; return lock; };
  navigator.wakeLock.request = (type) => {
    window.__calls.wake++;
    return request(type).then((lock) => { window.__calls.wakeGranted++; return counted(lock); }, () => {
      const stand = new EventTarget(); stand.type = type; stand.released = false;
      stand.release = () => { window.__calls.wakeRelease++; stand.released = true; return Promise.resolve(); };
      return stand;
    });
  };
}
navigator.vibrate = () => { window.__calls.vibrate++; return true; };
const fullscreen = Element.prototype.requestFullscreen;
Element.prototype.requestFullscreen = function (options) { window.__calls.fullscreen++; return fullscreen ? fullscreen.call(this, options) : Promise.reject(new Error("none")); };
"""


def _calls(phone):
    return phone.execute_script("return window.__calls") or {}


def _why(phone):
    return phone.find_element(By.ID, "why").text


def _body(driver, name):
    return driver.find_element(By.TAG_NAME, "body").get_attribute(name)


def _metrics(driver, width, height, landscape):
    orientation = {"type": "landscapePrimary", "angle": 90} if landscape else {"type": "portraitPrimary", "angle": 0}
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 2, "mobile": True, "screenOrientation": orientation})


def _frames_since(car, start):
    return [s for (_, s, _) in car.timed()[start:]]


def _messages(ws, seconds):
    """Every message a WebSocket receives within `seconds`."""
    out = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        ws.settimeout(max(0.05, end - time.monotonic()))
        try:
            out.append(json.loads(ws.recv()))
        except websocket.WebSocketTimeoutException:
            break
        except Exception:
            break
    return out


def axe_violations(driver, axe_source):
    """axe-core's serious and critical violations on the current page (WCAG 2 A and AA rules)."""
    driver.execute_script(axe_source)
    result = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa'] } }, (error, results) => {"
        " done(error ? { error: String(error) } : { violations: results.violations.map((v) => ({ id: v.id, impact: v.impact,"
        " nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 4) })) }); });")
    if "error" in result:
        return [{"id": "axe-error", "impact": "critical", "nodes": [result["error"]]}]
    return [v for v in result["violations"] if v["impact"] in ("serious", "critical")]


def driver_part(args, operator, make_browser, checks):
    began = time.monotonic()
    config = os.path.join(args.out, "driver.toml")
    with open(config, "w") as f:
        f.write('[dashboard]\ncontrols = true\ntoken = "%s"\njoin = "once"\n[steering]\nsensitivity = 1.5\nsmoothing_ms = 0\n' % TOKEN)
    with open(config, "rb") as f:
        config_bytes = f.read()
    car = Car()
    port = free_port()
    cb = Carbridge(args.bin, ["--config", config, "--link", "tcp://127.0.0.1:%d" % car.port, "--dashboard", "127.0.0.1:%d" % port],
                   os.path.join(args.out, "driver.log"))
    base = "http://127.0.0.1:%d" % port
    phone = make_browser()
    hand = None
    try:
        wait_http(base + "/")
        car.wait(lambda c: c.connections == 1 and len(c.texts()) >= 1)
        operator.get(base + "/?token=" + TOKEN)
        shown = lambda: operator.find_element(By.ID, "join-section").get_attribute("data-url") or ""
        _wait(operator, lambda d: shown().startswith(base + "/join?code="))
        url = shown()
        phone.execute_cdp_cmd("Network.setUserAgentOverride", {"userAgent": ANDROID})
        phone.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 5})
        phone.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORDER})
        _metrics(phone, 390, 844, False)
        phone.get(url)
        checks.check("driver: the join code opens the driver's page as a driver",
                     _wait(phone, lambda d: _body(d, "data-role") == "driver" and _body(d, "data-controls") == "true")
                     and phone.current_url == base + "/drive", "%s %s" % (phone.current_url, _body(phone, "data-role")))
        for part in (_installable, _roles, _accessible, _drive, _one_screen):
            try:
                part(args, phone, operator, car, cb, checks, base, config, config_bytes)
            except Exception as error:
                checks.check("driver " + part.__name__, False, "%s: %s" % (type(error).__name__, error))
    finally:
        from phone_part import drop_hands
        drop_hands(phone)
        phone.quit()
        cb.stop()
        car.close()
        with open(os.path.join(args.out, "driver-car.txt"), "w") as f:
            f.writelines("%.3f %s\n" % (t, s) for (t, s, _) in car.timed())
        print("driver part: %.1f s" % (time.monotonic() - began), flush=True)


def _installable(args, phone, operator, car, cb, checks, base, config, config_bytes):
    with urllib.request.urlopen(base + "/manifest.webmanifest") as response:
        kind = response.headers.get("Content-Type", "")
        manifest = json.loads(response.read())
    with urllib.request.urlopen(base + "/icon.svg") as response:
        icon_kind = response.headers.get("Content-Type", "")
        icon = response.read()
    checks.check("driver: the web app manifest launches /drive full screen, with an icon",
                 kind.startswith("application/manifest+json") and manifest.get("display") == "fullscreen"
                 and manifest.get("start_url") == "/drive" and any(i.get("src") == "/icon.svg" for i in manifest.get("icons", []))
                 and icon_kind.startswith("image/svg+xml") and icon.startswith(b"<svg"), "%s %s %s" % (kind, manifest, icon_kind))
    read = phone.execute_cdp_cmd("Page.getAppManifest", {})
    checks.check("driver: Chromium reads the manifest without errors",
                 read.get("url", "").endswith("/manifest.webmanifest") and read.get("errors") == [] and '"fullscreen"' in read.get("data", ""),
                 "%s %s" % (read.get("url"), read.get("errors")))


def _roles(args, phone, operator, car, cb, checks, base, config, config_bytes):
    host = base[len("http://"):]
    cookie = lambda browser: "carbridge_session=" + {c["name"]: c for c in browser.get_cookies()}["carbridge_session"]["value"]
    as_driver = websocket.create_connection("ws://%s/ws" % host, origin=base, cookie=cookie(phone), timeout=3)
    as_operator = websocket.create_connection("ws://%s/ws" % host, origin=base, cookie=cookie(operator), timeout=3)
    try:
        hello = json.loads(as_driver.recv())
        checks.check("driver: the join's session is a driver's (controls, role driver)",
                     hello.get("role") == "driver" and hello.get("controls") is True, str(hello))
        refusals = {}
        for name, message in (("bt_scan", {"c": "bt_scan"}), ("bt_pick", {"c": "bt_pick", "addr": "98:D3:31:F5:2A:11"})):
            as_driver.send(json.dumps(message))
            got = [m for m in _messages(as_driver, 1.0) if m.get("type") == "rejected"]
            refusals[name] = got[0]["reason"] if got else ""
        checks.check("driver: a driver's Bluetooth search is refused with a sentence",
                     "searching for cars is the operator's" in refusals["bt_scan"], refusals["bt_scan"])
        checks.check("driver: a driver's car pick is refused with a sentence (the config file is the operator's)",
                     "config file" in refusals["bt_pick"] and "operator's" in refusals["bt_pick"], refusals["bt_pick"])
        heard = _messages(as_driver, 1.0)
        checks.check("driver: a driver's connection never receives the join code",
                     not any(m.get("type") == "join" and m.get("url") for m in heard)
                     and phone.execute_script("return document.getElementById('join-section')") is None,
                     str([m for m in heard if m.get("type") == "join"])[:200])
        with open(config, "rb") as f:
            checks.check("driver: the config file is byte for byte unchanged", f.read() == config_bytes)
        hello = json.loads(as_operator.recv())
        first = _messages(as_operator, 1.0)
        as_operator.send(json.dumps({"c": "bt_scan"}))
        after = _messages(as_operator, 1.5)
        searched = [m["bt"]["phase"] for m in after if m.get("type") == "state" and m.get("bt")]
        checks.check("driver: the operator's session is the operator's, shown the join code",
                     hello.get("role") == "operator" and any(m.get("type") == "join" and m.get("url") for m in first), str(hello))
        checks.check("driver: ... and its Bluetooth search is not refused (it starts, or says why bluetoothd cannot)",
                     not any(m.get("type") == "rejected" for m in after) and any(p != "idle" for p in searched), str(searched[-3:]))
    finally:
        as_driver.close()
        as_operator.close()


def _accessible(args, phone, operator, car, cb, checks, base, config, config_bytes):
    if not args.axe or not os.path.exists(args.axe):
        checks.check("driver: axe-core is there (Tests/browser/run.sh fetches it)", False, str(args.axe))
        return
    with open(args.axe) as f:
        source = f.read()
    found = axe_violations(phone, source)
    checks.check("driver: axe-core finds no serious or critical violation on the driver's page", found == [], str(found))
    operator.get(base + "/")
    _wait(operator, lambda d: _body(d, "data-controls") == "true")
    found = axe_violations(operator, source)
    checks.check("driver: axe-core finds no serious or critical violation on the operator's page", found == [], str(found))


def _click(phone, element_id):
    phone.find_element(By.ID, element_id).click()


def _drive(args, phone, operator, car, cb, checks, base, config, config_bytes):
    # The engine is off: a tap on Speed+ is refused on the page, says why, vibrates, and sends nothing.
    start = len(car.timed())
    before = _calls(phone)
    _click(phone, "btn-speed-up")
    checks.check("driver: with the engine off, Speed+ says why and vibrates (nothing sent)",
                 _wait(phone, lambda d: "Engine off" in _why(d), 2) and _calls(phone).get("vibrate", 0) > before.get("vibrate", 0)
                 and _frames_since(car, start) == [], "%s %s" % (_why(phone), _frames_since(car, start)))
    checks.check("driver: full screen is asked for on the first tap", _calls(phone).get("fullscreen", 0) >= 1, str(_calls(phone)))

    hand = Hand(phone, 0, 0)
    from phone_part import _hands
    _hands[(id(phone), phone.current_window_handle)] = hand
    _click(phone, "btn-engine")
    _wait(phone, lambda d: d.find_element(By.ID, "engine").get_attribute("data-on") == "true")
    _click(phone, "mode-tilt")
    checks.check("driver: the wake lock is requested when driving starts",
                 _wait(phone, lambda d: _calls(d).get("wake") == 1 and _body(d, "data-wake") == "held", 2),
                 "%s %s" % (_calls(phone), _body(phone, "data-wake")))
    _wait(phone, lambda d: d.find_element(By.ID, "driver").get_attribute("data-you") == "true")

    # Every control, each frame awaited before the next tap: tilt γ 20 → θ 30 (A 1).
    start = len(car.timed())
    steps = [("tilt", "R,1,0,1"), ("btn-speed-up", "R,1,10,1"), ("btn-speed-up", "R,1,20,1"), ("btn-speed-down", "R,1,10,1"),
             ("btn-gear", "Y,1,10,0"), ("btn-gear", "R,1,10,1"), ("btn-f1", "F,1,10,1"), ("btn-f2", "G,1,10,1"),
             ("btn-f3", "H,1,10,1"), ("btn-f4", "I,1,10,1"), ("btn-f5", "J,1,10,1")]
    missing = []
    for control, frame in steps:
        mark = len(car.timed())
        if control == "tilt":
            hand.set(0, 20)
        else:
            _click(phone, control)
        if not car.wait(lambda c: frame in _frames_since(c, mark), 2):
            missing.append(control)
    got = distinct_runs([s for s in _frames_since(car, start) if s[0] in "MLRBXYFGHIJE"])
    expected = [frame for _, frame in steps]
    checks.check("driver: tilt, Speed+, Speed−, Gear and F1–F5 give exactly their frames",
                 missing == [] and [s for s in got if s[0] in "FGHIJ"] == expected[6:]
                 and distinct_runs([s for s in got if s[0] not in "FGHIJ"]) == expected[:6], "%s missing %s" % (got, missing))

    # The sensor stops while driving at speed: the stop frame within 1 s, and the page says why.
    vibrations = _calls(phone).get("vibrate", 0)
    mark = len(car.timed())
    stopped_at = time.monotonic()
    hand.still()
    stop = _poll(lambda: next((t for (t, s, _) in car.timed()[mark:] if s.split(",")[2:3] == ["0"]), None), 2.0)
    delay = (stop - stopped_at) * 1000 if stop else None
    checks.check("driver: the tilt sensor goes silent at speed: the stop frame within 1 s",
                 delay is not None and delay <= 1000, "%s ms" % (round(delay) if delay is not None else "none"))
    checks.check("driver: ... and the page says the sensor went silent, and vibrates",
                 _wait(phone, lambda d: "sensor" in _why(d), 2) and _calls(phone).get("vibrate", 0) > vibrations, _why(phone))
    hand.tremble()
    hand.set(0, 21)
    mark = len(car.timed())
    _click(phone, "btn-speed-up")
    car.wait(lambda c: "R,1,10,1" in _frames_since(c, mark), 2)

    # The car drops the link: the page says so at once.
    connections = car.connections
    drop_car_link(car)
    checks.check("driver: the link dropped by the car: the page says the link went down",
                 _wait(phone, lambda d: "link to the car went" in _why(d), 3), _why(phone))
    car.wait(lambda c: c.connections > connections, 10)
    _wait(phone, lambda d: d.find_element(By.ID, "link").get_attribute("data-state") == "up", 10)
    car.say("CAR forward-right at 10\n")
    checks.check("driver: the car's last line is on the page", _wait(phone, lambda d: "CAR forward-right at 10" in d.find_element(By.ID, "car-line").text, 2),
                 phone.find_element(By.ID, "car-line").text)

    # The engine turned off elsewhere (the kiosk's keyboard): the stop frame, and the page says why.
    mark = len(car.timed())
    cb.type("e", pause=0)
    checks.check("driver: the engine turned off elsewhere: the page says so",
                 car.wait(lambda c: "E,0,0,0" in _frames_since(c, mark), 2)
                 and _wait(phone, lambda d: "engine was turned off" in _why(d), 2), "%s %s" % (_why(phone), _frames_since(car, mark)[-3:]))

    # The stick, in the wheel's place: forward full speed, let go.
    _click(phone, "btn-engine")
    _wait(phone, lambda d: d.find_element(By.ID, "engine").get_attribute("data-on") == "true")
    _click(phone, "mode-stick")
    checks.check("driver: Stick puts the stick where the wheel was; the speed stays in view",
                 phone.find_element(By.ID, "stick").is_displayed() and not phone.find_element(By.ID, "wheel-view").is_displayed()
                 and phone.find_element(By.ID, "speed").is_displayed())
    mark = len(car.timed())
    _drag(phone, [(0, 1)])
    car.wait(lambda c: "M,0,0,1" in [s for s in _frames_since(c, mark)][1:], 3)
    got = distinct_runs([s for s in _frames_since(car, mark) if s[0] in "MLRBXY"])
    checks.check("driver: the stick forward gives M,0,240,1; let go, M,0,0,1", got[-2:] == ["M,0,240,1", "M,0,0,1"], str(got))
    mark = len(car.timed())
    _click(phone, "btn-engine")
    checks.check("driver: Engine off gives E,0,0,0", car.wait(lambda c: "E,0,0,0" in _frames_since(c, mark), 2), str(_frames_since(car, mark)))
    _click(phone, "mode-off")
    checks.check("driver: the wake lock is released when driving stops",
                 _wait(phone, lambda d: _calls(d).get("wakeRelease", 0) >= 1 and _body(d, "data-wake") == "none", 2),
                 str(_calls(phone)))


def _one_screen(args, phone, operator, car, cb, checks, base, config, config_bytes):
    measure = """
      const vw = innerWidth, vh = innerHeight, de = document.documentElement, bad = [];
      for (const el of document.querySelectorAll('button, #stick, #wheel-view, #speed-box, #link, #why, #engine, #gear, #car-line')) {
        if (!el.getClientRects().length) continue;
        const r = el.getBoundingClientRect();
        if (r.left < -0.5 || r.top < -0.5 || r.right > vw + 0.5 || r.bottom > vh + 0.5)
          bad.push(el.id + ' outside (' + [r.left, r.top, r.right, r.bottom].map(Math.round) + ')');
        if (el.tagName === 'BUTTON' && (r.width < 44 || r.height < 44)) bad.push(el.id + ' ' + Math.round(r.width) + 'x' + Math.round(r.height));
        if (el.id === 'stick' && (Math.abs(r.width - r.height) > 1 || r.width < 120)) bad.push('stick ' + Math.round(r.width) + 'x' + Math.round(r.height) + ' is not a circle a thumb can use');
      }
      return { sw: de.scrollWidth, sh: de.scrollHeight, vw, vh, bad };"""
    problems = []
    shots = 0
    for width, height in SIZES:
        for landscape in (False, True):
            w, h = (height, width) if landscape else (width, height)
            _metrics(phone, w, h, landscape)
            for mode in ("tilt", "stick"):
                _click(phone, "mode-" + mode)
                phone.execute_script("return new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
                m = phone.execute_script(measure)
                if m["sw"] > m["vw"] or m["sh"] > m["vh"] or m["bad"]:
                    problems.append("%dx%d %s: scroll %dx%d in %dx%d, %s" % (w, h, mode, m["sw"], m["sh"], m["vw"], m["vh"], m["bad"]))
                phone.save_screenshot(os.path.join(args.out, "driver-%dx%d-%s.png" % (w, h, mode)))
                shots += 1
    _click(phone, "mode-off")
    checks.check("driver: one screen at every size, portrait and landscape, tilt and stick: no scroll, every control inside, "
                 "tap targets ≥ 44 px (%d screenshots)" % shots, problems == [], "; ".join(problems))
