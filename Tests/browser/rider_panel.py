"""The dashboard's rider panel (issue 16) in a real browser: `carbridge run --replay` of the hands-free
recordings of the end-to-end tests (a balance board session, a tilt-throttle session) with
`--dashboard`, the page read through its DOM.

The page is loaded and a MutationObserver records every change of the rider panel (arming badge, the
centre-of-pressure dot, the weight, the pitch) and of the engine/speed before the car listens: the
replay starts when carbridge's link comes up, so nothing the rider does is missed, whatever the
browser's polling rate. The recordings:

- board (Tests/EndToEndTests/Fixtures/board-handsfree-session.evemu): 60 kg centred at 0.1 s, a sway
  inside the dead zone, armed at 2.1 s, lean forward (centre of pressure y 0.3) at 2.5 s, lean left
  (x -0.3) at 2.8 s, step off (3 kg) at 3.0 s, the empty board;
- tilt (tilt-throttle-session.evemu): level 1 s (armed with arm_tilt), pitch 15 deg forward, roll 30 deg
  left, pitch 15 deg back.

Called from dashboard_test.py's main (one browser, one `N passed, N failed`).
"""
import json, os, time
from harness import Car, Carbridge, distinct_runs, free_port, wait_http
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "EndToEndTests", "Fixtures")

# Appends one record to window.riderLog whenever what the rider panel (or the engine and speed) shows changes.
RECORDER = """
window.riderLog = [];
const $ = (id) => document.getElementById(id);
const snapshot = () => ({
  shown: !$("handsfree-section").classList.contains("hidden"),
  arming: $("hf-arming").dataset.arming || "",
  board: !$("hf-board").classList.contains("hidden"),
  cx: Number($("hf-dot").getAttribute("cx")), cy: Number($("hf-dot").getAttribute("cy")),
  weight: $("hf-weight").textContent, cop: $("hf-cop").textContent, pitch: $("hf-pitch").textContent,
  engine: $("engine").dataset.on || "", speed: $("speed").textContent, angle: $("wheel").dataset.angle || ""
});
let last = "";
const record = () => {
  const s = snapshot(), key = JSON.stringify(s);
  if (key === last) return;
  last = key; s.t = performance.now(); window.riderLog.push(s);
};
new MutationObserver(record).observe(document.body, { subtree: true, attributes: true, childList: true, characterData: true });
record();
"""


def _ride(args, driver, checks, name, recording, config):
    """Runs one replay with the page recording; returns (rider log, the car's frames) or None."""
    car_port = free_port()
    port = free_port()
    base = "http://127.0.0.1:%d" % port
    cb = Carbridge(args.bin, ["--config", os.path.join(FIXTURES, config), "--replay", os.path.join(FIXTURES, recording),
                              "--link", "tcp://127.0.0.1:%d" % car_port, "--dashboard", "127.0.0.1:%d" % port,
                              "--no-keyboard"], os.path.join(args.out, "rider-%s.log" % name))
    car = None
    try:
        if not checks.check("rider %s: dashboard up" % name, wait_http(base + "/") == 200):
            return None
        driver.get(base + "/")
        # The page has its first state (the link is not up: no car listens yet) before the recorder starts.
        WebDriverWait(driver, 5, poll_frequency=0.05).until(
            lambda d: d.find_element(By.ID, "link").get_attribute("data-state") in ("down", "connecting"))
        driver.execute_script(RECORDER)
        car = Car(car_port)   # now carbridge's next connect attempt succeeds and the replay starts
        try:
            status = cb.process.wait(30)
        except Exception:
            status = None
        checks.check("rider %s: the replayed run ends by itself (exit 0)" % name, status == 0, str(status))
        # The page may still be applying the last states when the process exits: wait until the log is quiet.
        count = -1
        end = time.monotonic() + 3
        while time.monotonic() < end:
            log = driver.execute_script("return window.riderLog")
            if len(log) == count:
                break
            count = len(log)
            time.sleep(0.3)
        frames = car.texts()
        with open(os.path.join(args.out, "rider-%s-dom.json" % name), "w") as f:
            json.dump({"frames": frames, "dom": log}, f, indent=1)
        driver.save_screenshot(os.path.join(args.out, "rider-%s.png" % name))
        return log, frames
    finally:
        cb.stop()
        if car is not None:
            car.close()


def _first(log, predicate, after=-1):
    """The index of the first record after `after` that satisfies predicate, or None."""
    return next((i for i, r in enumerate(log) if i > after and predicate(r)), None)


def board_part(args, driver, checks):
    ride = _ride(args, driver, checks, "board", "board-handsfree-session.evemu", "handsfree-board-replay.toml")
    if ride is None:
        return
    log, frames = ride
    checks.check("rider board: the car gets the ride's frames", distinct_runs(frames[1:]) ==
                 ["M,0,120,1", "L,-1,120,1", "L,-1,0,1", "M,0,0,1", "E,0,0,0"], str(distinct_runs(frames)))
    on = _first(log, lambda r: r["shown"] and r["weight"] == "60.0 kg")
    checks.check("rider board: the panel shows the rider's weight (60.0 kg) and the board's square", on is not None
                 and log[on]["board"], str(log[:3]))
    if on is None:
        return
    centred = log[on]
    checks.check("rider board: standing centred, the dot is in the middle", abs(centred["cx"]) <= 5 and abs(centred["cy"]) <= 5,
                 "cx %s cy %s" % (centred["cx"], centred["cy"]))
    settling = _first(log, lambda r: r["arming"] == "settling", on - 1)
    armed = _first(log, lambda r: r["arming"] == "armed", on - 1)
    # (The engine's change is sent to the browser at once and the reading a moment later, so one state
    # may show SETTLING with the engine already on: only the order and the ends are checked.)
    checks.check("rider board: SETTLING while standing still with the engine off, then ARMED with the engine on",
                 settling is not None and armed is not None and settling < armed and log[armed]["engine"] == "true"
                 and log[on]["engine"] == "false" and log[settling]["engine"] == "false",
                 "settling %s armed %s: %s" % (settling, armed, [(r["arming"], r["engine"]) for r in log[on:(armed or on) + 1]]))
    if armed is None:
        return
    forward = _first(log, lambda r: r["cy"] <= -25, armed - 1)
    checks.check("rider board: leaning forward moves the dot up (cy -30) with speed 120",
                 forward is not None and abs(log[forward]["cy"] + 30) <= 1 and abs(log[forward]["cx"]) <= 1
                 and _first(log, lambda r: r["speed"] == "120", forward - 1) is not None,
                 str(log[forward] if forward is not None else log[armed:armed + 4]))
    if forward is None:
        return
    left = _first(log, lambda r: r["cx"] <= -25, forward)
    checks.check("rider board: leaning left moves the dot left (cx -30, cy -30), the CoP shown",
                 left is not None and abs(log[left]["cx"] + 30) <= 1 and abs(log[left]["cy"] + 30) <= 1
                 and log[left]["cop"] == "CoP x -0.30 y 0.30", str(log[left] if left is not None else log[forward:forward + 4]))
    if left is None:
        return
    off = _first(log, lambda r: r["arming"] == "leaving", left)
    checks.check("rider board: stepping off shows LEAVING, the weight (3.0 kg), speed 0",
                 off is not None and log[off]["weight"] == "3.0 kg" and
                 _first(log, lambda r: r["speed"] == "0", left) is not None,
                 str(log[off] if off is not None else log[left:left + 4]))
    checks.check("rider board: then the engine goes off", _first(log, lambda r: r["engine"] == "false", left) is not None,
                 str(log[-3:]))


def tilt_part(args, driver, checks):
    ride = _ride(args, driver, checks, "tilt", "tilt-throttle-session.evemu", "handsfree-tilt-replay.toml")
    if ride is None:
        return
    log, frames = ride
    checks.check("rider tilt: the car gets the ride's frames", distinct_runs(frames[1:]) ==
                 ["M,0,120,1", "L,-1,120,1", "L,-1,0,1", "E,0,0,0"], str(distinct_runs(frames)))
    level = _first(log, lambda r: r["shown"] and r["pitch"] == "pitch 0.0°")
    checks.check("rider tilt: the panel shows the pitch (0.0°), no board square, no weight",
                 level is not None and not log[level]["board"] and log[level]["weight"] == "" and log[level]["cop"] == "",
                 str(log[:3]))
    armed = _first(log, lambda r: r["arming"] == "armed")
    checks.check("rider tilt: held level -> ARMED with the engine on", armed is not None and log[armed]["engine"] == "true"
                 and _first(log, lambda r: r["arming"] == "settling") is not None, str([r["arming"] for r in log]))
    forward = _first(log, lambda r: r["pitch"] == "pitch +15.0°" and r["speed"] == "120", armed if armed is not None else -1)
    checks.check("rider tilt: pitch +15.0° shown with speed 120", forward is not None, str(log[-6:]))
    back = _first(log, lambda r: r["pitch"] == "pitch -15.0°", forward if forward is not None else -1)
    checks.check("rider tilt: sitting up shows pitch -15.0° and speed 0",
                 back is not None and _first(log, lambda r: r["speed"] == "0", back - 1) is not None, str(log[-6:]))


def rider_panel_part(args, driver, checks):
    """Both rides; each check is one PASS/FAIL line of the browser stage."""
    for part in (board_part, tilt_part):
        try:
            part(args, driver, checks)
        except Exception as error:
            checks.check(part.__name__, False, "%s: %s" % (type(error).__name__, error))
