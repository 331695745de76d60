"""The car's status on the dashboard (issue 32, part 6) in a real browser: the harness's TCP car says
status lines (`KEY=VALUE;…`, docs/protocol.md §7.1) to `carbridge run --dashboard` with
`[car] low_battery = "BAT<6.8"`:

- `BAT=7.40;RSSI=-61` → the page's Car status table shows both keys with their values, no warning,
  and /metrics has `carbridge_car_status{key="BAT"} 7.4` and `carbridge_car_low_battery 0`;
- `BAT=6.50` → the page shows the low-battery banner, the table 6.50, and /metrics
  `carbridge_car_low_battery 1`.

Called from dashboard_test.py's main (one browser, one `N passed, N failed`).
"""
import os, urllib.request
from harness import Car, Carbridge, free_port, wait_http
from prometheus_client.parser import text_string_to_metric_families  # python3-prometheus-client
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait


def _table(driver):
    """The status table as {key: value}, read in one script call: the page redraws the table on every state,
    so rows found one call earlier may be gone by the next (a stale element)."""
    rows = driver.execute_script(
        "return Array.from(document.querySelectorAll('#car-status tr')).map(r => "
        "[r.getAttribute('data-key'), (r.querySelector('td') || {textContent: ''}).textContent.trim()]);")
    return {key: value for key, value in rows}


def _metrics(base):
    """/metrics as {(name, frozen labels): value}."""
    text = urllib.request.urlopen(base + "/metrics", timeout=5).read().decode()
    values = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            values[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return values


def _until(driver, condition, timeout=5.0):
    try:
        WebDriverWait(driver, timeout, poll_frequency=0.05).until(lambda d: condition(d))
        return True
    except Exception:
        return False


def status_part(args, driver, checks):
    try:
        _status(args, driver, checks)
    except Exception as error:  # noqa: BLE001 - a failed check with its reason, not a crash of the stage
        checks.check("status", False, "%s: %s" % (type(error).__name__, error))


def _status(args, driver, checks):
    config = os.path.join(args.out, "status.toml")
    with open(config, "w") as f:
        f.write('[car]\nlow_battery = "BAT<6.8"\n')
    car = Car()
    port = free_port()
    base = "http://127.0.0.1:%d" % port
    cb = Carbridge(args.bin, ["--config", config, "--link", "tcp://127.0.0.1:%d" % car.port, "--dashboard",
                              "127.0.0.1:%d" % port, "--no-keyboard"], os.path.join(args.out, "status.log"))
    try:
        if not checks.check("status: dashboard up", wait_http(base + "/") == 200):
            return
        car.wait(lambda c: c.connections == 1)
        driver.get(base + "/")
        _until(driver, lambda d: d.find_element(By.ID, "link").get_attribute("data-state") == "up")
        checks.check("status: the Car status section says nothing was reported yet",
                     driver.find_element(By.ID, "car-status-none").is_displayed() and _table(driver) == {})
        car.say("BAT=7.40;RSSI=-61\n")
        ok = _until(driver, lambda d: _table(d) == {"BAT": "7.40", "RSSI": "-61"})
        checks.check("status: BAT=7.40;RSSI=-61 shows both keys in the table, no warning",
                     ok and not driver.find_element(By.ID, "battery-warning").is_displayed(), str(_table(driver)))
        metrics = _metrics(base)
        checks.check("status: /metrics has carbridge_car_status{key=\"BAT\"} 7.4 and RSSI -61, low battery 0",
                     metrics.get(("carbridge_car_status", (("key", "BAT"),))) == 7.4
                     and metrics.get(("carbridge_car_status", (("key", "RSSI"),))) == -61
                     and metrics.get(("carbridge_car_low_battery", ())) == 0,
                     str({k: v for k, v in metrics.items() if k[0].startswith("carbridge_car_")}))
        checks.check("status: the status line is not listed among the car's lines",
                     "BAT=7.40" not in driver.find_element(By.ID, "car").text, driver.find_element(By.ID, "car").text)
        car.say("BAT=6.50\n")
        ok = _until(driver, lambda d: d.find_element(By.ID, "battery-warning").is_displayed())
        warning = driver.find_element(By.ID, "battery-warning").text
        checks.check("status: BAT=6.50 below BAT<6.8 shows the warning banner",
                     ok and "car battery low: BAT=6.50 (below 6.8)" in warning and _table(driver).get("BAT") == "6.50",
                     "%r %s" % (warning, _table(driver)))
        checks.check("status: /metrics has carbridge_car_low_battery 1",
                     _metrics(base).get(("carbridge_car_low_battery", ())) == 1)
        driver.save_screenshot(os.path.join(args.out, "dashboard-status.png"))
    finally:
        cb.stop()
        car.close()
