"""The dashboard over HTTPS (issue 32): `[dashboard] tls = "self-signed"` with the state directory in the
test's out dir. The logged fingerprint is the served certificate's; curl verifies the page with the stored
certificate as its only CA (so it names 127.0.0.1); a restart serves the same certificate; the token, Origin
and message rules hold over https/wss; headless Chromium, trusting the certificate by its SPKI hash only,
gets a secure context on this machine's non-loopback address (and, as the control, none over plain HTTP
there); the camera's <img> and its origin in img-src; and controls over plain HTTP on that address are
refused by check-config unless allow_http = true. Called from dashboard_test.py's main()."""
import base64, hashlib, json, os, re, socket, ssl, subprocess, time, urllib.error, urllib.request
from harness import Car, Carbridge, free_port, wait_http
from phone_part import _motion, _orient, _phone, drop_hands

import websocket  # python3-websocket
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

TOKEN = "tls-token-0123456789abcdef"
CAMERA = "https://127.0.0.1:9/stream"  # nothing listens: only the page and its policy are checked


def lan_address():
    """This machine's first non-loopback IPv4 address (the route to a public address; no packet is sent)."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))
        address = probe.getsockname()[0]
    except OSError:
        address = None
    finally:
        probe.close()
    if address and not address.startswith("127."):
        return address
    out = subprocess.run(["ip", "-4", "-o", "addr", "show", "scope", "global"], capture_output=True, text=True).stdout
    found = re.findall(r"inet (\d+\.\d+\.\d+\.\d+)/", out)
    return found[0] if found else None


DUMMY = "cbtls0"


def add_dummy_address():
    """A machine with loopback only (a bare CI box): a veth pair with a TEST-NET address on one end, as root;
    nil when that is not possible. `remove_dummy` takes it away."""
    if os.geteuid() != 0:
        return None
    for command in (["ip", "link", "add", DUMMY, "type", "veth", "peer", "name", DUMMY + "p"], ["ip", "addr", "add", "198.51.100.7/24", "dev", DUMMY],
                    ["ip", "link", "set", DUMMY, "up"], ["ip", "link", "set", DUMMY + "p", "up"]):
        if subprocess.run(command, capture_output=True).returncode != 0:
            remove_dummy()
            return None
    return "198.51.100.7"


def remove_dummy():
    subprocess.run(["ip", "link", "del", DUMMY], capture_output=True)


def spki_hash(cert_path):
    """base64(SHA-256(SubjectPublicKeyInfo)), as Chromium's --ignore-certificate-errors-spki-list takes it."""
    pub = subprocess.run(["openssl", "x509", "-in", cert_path, "-pubkey", "-noout"], capture_output=True, check=True).stdout
    der = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "der"], input=pub, capture_output=True, check=True).stdout
    return base64.b64encode(hashlib.sha256(der).digest()).decode()


def served_fingerprint(host, port):
    pem = ssl.get_server_certificate((host, port))
    digest = hashlib.sha256(ssl.PEM_cert_to_DER_cert(pem)).hexdigest().upper()
    return ":".join(digest[i:i + 2] for i in range(0, len(digest), 2))


def logged_fingerprint(log_path):
    with open(log_path) as f:
        found = re.findall(r"dashboard on https://\S+ .*certificate SHA-256 ((?:[0-9A-F]{2}:){31}[0-9A-F]{2})", f.read())
    return found[-1] if found else None


def wait_https(url, timeout=10.0):
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with urllib.request.urlopen(url, timeout=1, context=context) as response:
                return response.status
        except Exception:
            time.sleep(0.05)
    return None


def spki_browser(args, spki, profile="chromium-tls"):
    options = Options()
    options.binary_location = "/usr/bin/chromium"
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,1100",
                 "--user-data-dir=" + os.path.join(args.out, profile),
                 "--ignore-certificate-errors-spki-list=" + spki]:
        options.add_argument(flag)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def start(args, name, config_text, state, link_port, listen):
    config = os.path.join(args.out, "tls-%s.toml" % name)
    with open(config, "w") as f:
        f.write(config_text)
    saved = os.environ.get("STATE_DIRECTORY")
    os.environ["STATE_DIRECTORY"] = state
    try:
        return Carbridge(args.bin, ["--config", config, "--link", "tcp://127.0.0.1:%d" % link_port, "--dashboard", listen,
                                    "--no-keyboard"], os.path.join(args.out, "tls-%s.log" % name))
    finally:
        if saved is None:
            del os.environ["STATE_DIRECTORY"]
        else:
            os.environ["STATE_DIRECTORY"] = saved


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


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def https_security(checks, port, cert):
    """The token, Origin and message rules over https/wss, verified against the stored certificate."""
    host = "127.0.0.1:%d" % port
    base = "https://" + host
    url = "wss://%s/ws" % host
    sslopt = {"ca_certs": cert}
    context = ssl.create_default_context(cafile=cert)
    opener = urllib.request.build_opener(_NoRedirect(), urllib.request.HTTPSHandler(context=context))

    def login(token):
        try:
            opener.open(urllib.request.Request(base + "/login", data=("token=" + token).encode(), method="POST"))
            return 200, ""
        except urllib.error.HTTPError as response:
            return response.code, response.headers.get("Set-Cookie", "")

    with opener.open(base + "/") as response:
        policy = response.headers.get("Content-Security-Policy", "")
        page = response.read().decode()
    checks.check("https: camera_url's <img> is on the page and img-src gains exactly its origin",
                 'id="camera" src="%s"' % CAMERA in page and "img-src data: 'self' https://127.0.0.1:9;" in policy, policy)
    status, _ = login("wrong-token-000000")
    checks.check("https: a wrong token is refused (403)", status == 403, str(status))
    status, cookie_header = login(TOKEN)
    checks.check("https: the session cookie is Secure, HttpOnly, SameSite=Strict",
                 status == 303 and "; Secure" in cookie_header and "HttpOnly" in cookie_header and "SameSite=Strict" in cookie_header,
                 "%s %s" % (status, cookie_header))
    for origin in ["https://evil.example", "http://" + host]:
        try:
            websocket.create_connection(url, origin=origin, timeout=3, sslopt=sslopt).close()
            checks.check("wss: Origin %s refused" % origin, False, "upgraded")
        except websocket.WebSocketBadStatusException as error:
            checks.check("wss: Origin %s refused" % origin, error.status_code == 400, str(error.status_code))
    ws = websocket.create_connection(url, origin="https://" + host, cookie=cookie_header.split(";")[0], timeout=3, sslopt=sslopt)
    try:
        hello = json.loads(ws.recv())
        checks.check("wss: the session cookie gives controls", hello.get("controls") is True, str(hello))
        for bad, expect in [("engine", "not a flat JSON object"), ('{"c":"shutdown"}', "unknown control")]:
            ws.send(bad)
            reply = next_of_type(ws, "rejected")
            checks.check("wss: bad message rejected: %s" % expect, reply is not None and expect in reply["reason"], str(reply))
    finally:
        ws.close()


def phone_joins_over_https(args, checks, kiosk, port, cert, car):
    """The visitor's whole path: the kiosk's own screen (a loopback connection) shows the join code; a phone
    (another profile, trusting the certificate) opens it over HTTPS with no typing, tilts, and the car turns."""
    kiosk.get("https://127.0.0.1:%d/" % port)
    shown = ""
    end = time.monotonic() + 5
    while time.monotonic() < end and not shown.startswith("https://"):
        shown = kiosk.execute_script("var e = document.getElementById('join-url'); return e ? e.textContent : ''") or ""
        time.sleep(0.05)
    if not checks.check("https: the kiosk's screen shows an https:// join URL", shown.startswith("https://") and "/join?code=" in shown, shown):
        return
    phone = spki_browser(args, spki_hash(cert), profile="chromium-phone")
    try:
        _phone(phone)
        phone.get(shown)
        end = time.monotonic() + 5
        body = lambda: phone.find_element(By.TAG_NAME, "body")
        while time.monotonic() < end and body().get_attribute("data-controls") != "true":
            time.sleep(0.05)
        secure = phone.execute_script("return window.isSecureContext")
        controls = body().get_attribute("data-controls") == "true" and phone.current_url.endswith("/drive")
        checks.check("https: the phone that opened the join URL is logged in (controls, a secure context)",
                     controls and secure is True, "controls %s secure %s" % (controls, secure))
        phone.find_element(By.ID, "btn-engine").click()
        phone.find_element(By.ID, "mode-tilt").click()
        since = time.monotonic()
        _orient(phone, 0, 45)
        right = car.wait(lambda c: any(s.startswith("R,") for _, s in _motion(c, since)), 3)
        _orient(phone, 0, -45)
        left = car.wait(lambda c: any(s.startswith("L,") for _, s in _motion(c, since)), 3)
        checks.check("https: the joined phone steers the car by tilting (right, then left)", right and left,
                     str([s for _, s in _motion(car, since)][:6]))
        phone.find_element(By.ID, "btn-engine").click()
        cookie = {c["name"]: c for c in phone.get_cookies()}.get("carbridge_session", {})
        checks.check("https: the joined phone's cookie is Secure, HttpOnly, SameSite=Strict",
                     cookie.get("secure") is True and cookie.get("httpOnly") is True and cookie.get("sameSite") == "Strict", str(cookie))
    finally:
        drop_hands(phone)
        phone.quit()


def tls_part(args, checks):
    started = time.monotonic()
    lan = lan_address()
    dummy = lan is None and add_dummy_address() is not None
    if dummy:
        lan = lan_address()
    if not checks.check("a non-loopback IPv4 address to listen on", lan is not None, "a dummy interface" if dummy else str(lan)):
        return
    state = os.path.abspath(os.path.join(args.out, "tls-state"))  # as systemd's STATE_DIRECTORY is
    cert = os.path.join(state, "dashboard-cert.pem")
    key = os.path.join(state, "dashboard-key.pem")
    car = Car()
    port = free_port()
    config = '[dashboard]\ncontrols = true\ntoken = "%s"\ntls = "self-signed"\ncamera_url = "%s"\n' % (TOKEN, CAMERA)
    driver = None
    cb = start(args, "first", config, state, car.port, "0.0.0.0:%d" % port)
    try:
        if not checks.check("https: the dashboard is up", wait_https("https://127.0.0.1:%d/" % port) == 200):
            return
        served = served_fingerprint("127.0.0.1", port)
        logged = logged_fingerprint(os.path.join(args.out, "tls-first.log"))
        checks.check("https: the logged fingerprint is the served certificate's", logged == served, "%s vs %s" % (logged, served))
        checks.check("https: the key file is mode 0600", os.path.exists(key) and os.stat(key).st_mode & 0o777 == 0o600,
                     oct(os.stat(key).st_mode & 0o777) if os.path.exists(key) else "missing")
        curl = subprocess.run(["curl", "-sS", "--max-time", "5", "--cacert", cert, "https://127.0.0.1:%d/" % port],
                              capture_output=True, text=True)
        checks.check("curl --cacert <the stored certificate> verifies https://127.0.0.1 (and the page shows the fingerprint)",
                     curl.returncode == 0 and served in curl.stdout, "exit %d %s" % (curl.returncode, curl.stderr.strip()))
        https_security(checks, port, cert)
        driver = spki_browser(args, spki_hash(cert))
        driver.get("https://%s:%d/" % (lan, port))
        secure = driver.execute_script("return window.isSecureContext")
        footer = driver.execute_script("var e = document.getElementById('tls-fingerprint'); return e ? e.textContent : null")
        checks.check("Chromium trusting the SPKI only: https://%s is a secure context" % lan, secure is True, str(secure))
        checks.check("the page's footer shows the fingerprint", footer == served, str(footer))
        phone_joins_over_https(args, checks, driver, port, cert, car)
    finally:
        cb.stop()
    try:
        # The same certificate after a restart.
        cb = start(args, "second", config, state, car.port, "0.0.0.0:%d" % port)
        try:
            wait_https("https://127.0.0.1:%d/" % port)
            again = served_fingerprint("127.0.0.1", port)
            with open(os.path.join(args.out, "tls-second.log")) as f:
                remade = "made a new self-signed certificate" in f.read()
            checks.check("a restart serves the same certificate", again == served and not remade, "%s vs %s" % (again, served))
        finally:
            cb.stop()
        # Plain HTTP on the non-loopback address with controls: refused unless allow_http.
        plain = '[dashboard]\nlisten = "%s:%d"\ncontrols = true\ntoken = "%s"\n' % (lan, port, TOKEN)
        path = os.path.join(args.out, "tls-plain.toml")
        with open(path, "w") as f:
            f.write(plain)
        result = subprocess.run([args.bin, "check-config", path], capture_output=True, text=True)
        checks.check("check-config refuses controls over plain HTTP on %s" % lan,
                     result.returncode == 1 and "allow_http = true" in result.stderr and "deviceorientation" in result.stderr,
                     (result.stderr or result.stdout).strip()[:300])
        cb = start(args, "allow-http", plain + "allow_http = true\n", state, car.port, "%s:%d" % (lan, port))
        try:
            up = wait_http("http://%s:%d/" % (lan, port)) == 200
            checks.check("with allow_http = true plain HTTP on %s starts" % lan, up)
            if up and driver:
                driver.get("http://%s:%d/" % (lan, port))
                secure = driver.execute_script("return window.isSecureContext")
                checks.check("the control: plain HTTP on %s is not a secure context" % lan, secure is False, str(secure))
        finally:
            cb.stop()
    finally:
        if driver:
            driver.quit()
        car.close()
        if dummy:
            remove_dummy()
        print("tls part: %.1f s" % (time.monotonic() - started), flush=True)
