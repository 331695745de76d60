import DriveConfig

/// The dashboard's one page: HTML, CSS and JavaScript in one string, no build step, no external asset
/// (a kiosk may have no internet). Large type for reading across a room; works with touch.
enum DashboardPage {
    /// The page with what this run adds to it, made once when the server is made: the camera's section
    /// (an `<img>` of `camera`, loaded by the browser from the camera itself) and a footer line with the
    /// HTTPS certificate's fingerprint.
    static func render(camera: CameraURL?, fingerprint: String?) -> String {
        var page = html
        if let camera {
            let section = """
                <section id="camera-section">
                    <h2>Camera</h2>
                    <img id="camera" src="\(escaped(camera.text))" alt="the car's camera">
                  </section>
                """
            page = page.replacing(cameraMarker, with: section, maxReplacements: 1)
        }
        if let fingerprint {
            let footer = "<footer id=\"tls\">HTTPS certificate SHA-256 <span id=\"tls-fingerprint\">\(escaped(fingerprint))</span></footer>"
            page = page.replacing(footerMarker, with: footer, maxReplacements: 1)
        }
        return page
    }

    static let cameraMarker = "<!--camera-->"
    static let footerMarker = "<!--footer-->"

    /// `text` safe inside an HTML attribute or element.
    static func escaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }

    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>carbridge</title>
<style>
:root { --bg:#111418; --panel:#1b2027; --text:#e8edf2; --dim:#8a96a3; --ok:#3ad17a; --warn:#f2b63c; --bad:#ff5a5a; --accent:#4aa3ff; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--text); font:18px/1.35 system-ui, sans-serif; }
header { display:flex; flex-wrap:wrap; gap:.6em 1.2em; align-items:center; padding:.6em 1em; background:var(--panel); }
header h1 { font-size:1.3em; margin:0; }
.spaced { margin-top:.8em; }
.badge { font-weight:700; font-size:1.5em; padding:.1em .5em; border-radius:.3em; background:#2a3038; }
.badge.on, .badge.up { background:var(--ok); color:#062; }
.badge.connecting { background:var(--warn); color:#430; }
.badge.down, .badge.closed { background:var(--bad); color:#300; }
#link-reason, #conn { color:var(--dim); }
main { display:grid; grid-template-columns: repeat(auto-fit, minmax(300px, 1fr)); gap:1em; padding:1em; }
section { background:var(--panel); border-radius:.6em; padding:.8em 1em; min-width:0; }
h2 { font-size:1em; color:var(--dim); margin:0 0 .4em; text-transform:uppercase; letter-spacing:.08em; }
.big { font-size:3.2em; font-weight:800; line-height:1; }
svg { width:100%; max-height:320px; display:block; }
#wheel { transform-box: fill-box; transform-origin: center; transition: transform 60ms linear; }
#needle { transform-origin: 100px 110px; transition: transform 80ms linear; }
.seg { fill:none; stroke:#2f3742; stroke-width:10; }
.seg.active { stroke:var(--accent); }
.row { display:flex; gap:1em; align-items:baseline; flex-wrap:wrap; }
ul.log { list-style:none; margin:0; padding:0; font:15px/1.4 ui-monospace, monospace; max-height:14em; overflow:auto; }
ul.log li { white-space:pre-wrap; word-break:break-all; }
ul.log .t { color:var(--dim); margin-right:.6em; }
#controls button { font-size:1.3em; min-width:3.2em; min-height:2.4em; margin:.2em; border-radius:.4em; border:0; background:#2d3745; color:var(--text); touch-action:manipulation; }
#controls button:active { background:var(--accent); }
#steer { width:100%; height:3em; touch-action:none; }
#rejections li { color:var(--bad); }
#bt-scan, #bt-devices button { font-size:1.1em; min-height:2.2em; padding:0 .8em; border-radius:.4em; border:0; background:#2d3745; color:var(--text); touch-action:manipulation; }
#bt-scan:disabled { opacity:.5; }
#bt-devices li { display:flex; gap:.6em; align-items:center; justify-content:space-between; padding:.2em 0; }
#bt-status { color:var(--dim); margin:.4em 0; }
#bt-status[data-phase=failed] { color:var(--warn); }
a { color:var(--accent); }
.hidden { display:none !important; }
input[type=password] { font-size:1.1em; padding:.3em; }
#camera { width:100%; display:block; border-radius:.3em; background:#000; }
footer { padding:.4em 1em 1em; color:var(--dim); font-size:.8em; overflow-wrap:anywhere; }
</style>
</head>
<body>
<header>
  <h1>carbridge</h1>
  <span id="link" class="badge down">…</span>
  <span id="link-reason"></span>
  <span id="conn">connecting to carbridge…</span>
</header>
<main>
  <!--camera-->
  <section>
    <h2>Steering</h2>
    <svg viewBox="0 0 200 200" aria-label="steering wheel">
\#(PageParts.wheel)
    </svg>
    <div class="row"><span class="big" id="angle">0°</span><span>range <b id="range">A 0</b></span></div>
  </section>
  <section>
    <h2>Speed</h2>
    <svg viewBox="0 0 200 170" aria-label="speed gauge">
      <path id="gauge-track" fill="none" stroke="#2f3742" stroke-width="14"/>
      <path id="gauge-fill" fill="none" stroke="var(--accent)" stroke-width="14"/>
      <g id="ticks"></g>
      <line id="cap-mark" stroke="var(--bad)" stroke-width="5"/>
      <g id="needle"><line x1="100" y1="110" x2="100" y2="40" stroke="#fff" stroke-width="5" stroke-linecap="round"/><circle cx="100" cy="110" r="7" fill="#fff"/></g>
    </svg>
    <div class="row"><span class="big" id="speed">0</span><span id="cap">cap 240</span></div>
    <div class="row">
      <span>Engine <span id="engine" class="badge">OFF</span></span>
      <span>Gear <span id="gear" class="badge">FORWARD</span></span>
    </div>
  </section>
  <section id="handsfree-section" class="hidden">
    <h2>Rider <span id="hf-arming" class="badge">…</span></h2>
    <svg id="hf-board" viewBox="-110 -110 220 220" width="160" height="160" aria-label="centre of pressure">
      <rect x="-100" y="-100" width="200" height="200" fill="none" stroke="#2f3742" stroke-width="4"/>
      <line x1="-100" y1="0" x2="100" y2="0" stroke="#2f3742" stroke-width="1"/><line x1="0" y1="-100" x2="0" y2="100" stroke="#2f3742" stroke-width="1"/>
      <circle id="hf-dot" cx="0" cy="0" r="10" fill="var(--accent)"/>
    </svg>
    <div class="row"><span id="hf-weight"></span><span id="hf-cop"></span><span id="hf-pitch"></span></div>
  </section>
  <section id="controls-section" class="hidden">
    <h2>Controls</h2>
    <div id="controls" class="hidden">
      <div>
        <button id="btn-engine">Engine</button>
        <button id="btn-speed-up">Speed+</button>
        <button id="btn-speed-down">Speed−</button>
        <button id="btn-gear">Gear</button>
      </div>
      <div>
        <button id="btn-f1">F1</button><button id="btn-f2">F2</button><button id="btn-f3">F3</button><button id="btn-f4">F4</button><button id="btn-f5">F5</button>
      </div>
      <input id="steer" type="range" min="-90" max="90" step="1" value="0" aria-label="steering">
    </div>
    <form id="login" class="hidden" method="post" action="/login">
      <label>Token for controls <input type="password" name="token" autocomplete="off"></label>
      <button type="submit">Unlock</button>
    </form>
    <div id="controls-note"></div>
  </section>
  <section id="join-section" class="hidden">
    <h2>Join from a phone</h2>
    <style>#join-qr svg { width:260px; height:260px; max-width:100%; } #join-url { font:15px/1.4 ui-monospace, monospace; word-break:break-all; color:var(--dim); }</style>
    <div id="join-qr"></div>
    <div id="join-url"></div>
    <div>Scan to drive: each code works once.</div>
  </section>
  <section id="drive-link-section" class="hidden">
    <h2>Drive from a phone</h2>
    <p>One screen for driving by tilt or thumb stick: <a id="drive-link" href="/drive">open the driver's page</a> on the phone (visitors get it by scanning the join code).</p>
  </section>
  <section id="bt-section" class="hidden">
    <h2>Bluetooth</h2>
    <button id="bt-scan">Search for cars</button>
    <div id="bt-status" data-phase="idle">Search, then pick the car: it is saved as link.url in the config file and used from the next start.</div>
    <ul class="log" id="bt-devices"></ul>
  </section>
  <section>
    <h2>Frames sent <span id="frames-sent">0</span></h2>
    <ul class="log" id="frames"></ul>
  </section>
  <section>
    <h2>From the car</h2>
    <ul class="log" id="car"></ul>
  </section>
  <section>
    <h2>Inputs</h2>
    <ul class="log" id="inputs"></ul>
    <h2 class="spaced">Pad feedback</h2>
    <ul class="log" id="feedback"></ul>
    <h2 class="spaced">Notices</h2>
    <ul class="log" id="notices"></ul>
    <ul class="log" id="rejections"></ul>
  </section>
  <!-- The car's status (KEY=VALUE lines, docs/protocol.md §7) and the low-battery banner, which the grid
       puts above every section. -->
  <div id="battery-warning" class="hidden" role="alert"></div>
  <div id="pad-battery-warning" class="hidden" role="status"></div>
  <section id="status-section">
    <h2>Car status</h2>
    <table id="car-status"></table>
    <div id="car-status-none">nothing reported yet</div>
  </section>
  <style>
  #battery-warning { grid-column: 1 / -1; order: -1; padding: .6em 1em; border-radius: .6em; background: var(--bad); color: #300; font-weight: 700; font-size: 1.3em; }
  #pad-battery-warning { grid-column: 1 / -1; order: -1; padding: .4em 1em; border-radius: .6em; background: var(--warn); color: #320; font-weight: 700; white-space: pre-line; }
  #car-status { font: 18px/1.4 ui-monospace, monospace; border-collapse: collapse; }
  #car-status th { text-align: left; color: var(--dim); font-weight: 400; padding-right: 1.2em; }
  #car-status tr.stale td { color: var(--dim); }
  #car-status-none { color: var(--dim); }
  </style>
  <script>
  "use strict";
  // The status table (a value not updated for 10 s is dimmed) and the battery warning.
  function renderStatus(s) {
    const warning = document.getElementById("battery-warning");
    warning.classList.toggle("hidden", !s.batteryWarning);
    warning.textContent = s.batteryWarning ? "⚠ " + s.batteryWarning : "";
    // A pad's battery (one line each): the driver's to charge, the car drives on.
    const pads = s.padBatteryWarnings || [], padWarning = document.getElementById("pad-battery-warning");
    padWarning.classList.toggle("hidden", pads.length === 0);
    padWarning.textContent = pads.map((text) => "⚠ " + text).join("\n");
    const table = document.getElementById("car-status"), rows = s.status || [];
    table.textContent = "";
    for (const entry of rows) {
      const tr = document.createElement("tr"), th = document.createElement("th"), td = document.createElement("td");
      th.textContent = entry.key; td.textContent = entry.value;
      tr.dataset.key = entry.key; tr.classList.toggle("stale", entry.ageMs > 10000);
      tr.appendChild(th); tr.appendChild(td); table.appendChild(tr);
    }
    document.getElementById("car-status-none").classList.toggle("hidden", rows.length > 0);
  }
  </script>
</main>
<!--footer-->
<script>
"use strict";
const $ = (id) => document.getElementById(id);
const NS = "http://www.w3.org/2000/svg";
let ws = null, hello = null, retryAt = 0, lastState = null, pingTimer = null, steerTimer = null;
let steerValue = 0, steerSent = 0;

\#(PageParts.wheelScript)
const G0 = -120, G1 = 120;            // the gauge's sweep, degrees
const gaugeAngle = (s) => G0 + (G1 - G0) * Math.max(0, Math.min(240, s)) / 240;
$("gauge-track").setAttribute("d", arc(100, 110, 78, G0, G1));
for (let s = 0; s <= 240; s += 40) {
  const [x1, y1] = polar(100, 110, 62, gaugeAngle(s)), [x2, y2] = polar(100, 110, 52, gaugeAngle(s));
  const t = document.createElementNS(NS, "text");
  const [tx, ty] = polar(100, 110, 40, gaugeAngle(s));
  t.setAttribute("x", tx); t.setAttribute("y", ty + 4); t.setAttribute("fill", "#8a96a3");
  t.setAttribute("font-size", "10"); t.setAttribute("text-anchor", "middle"); t.textContent = s;
  const l = document.createElementNS(NS, "line");
  l.setAttribute("x1", x1); l.setAttribute("y1", y1); l.setAttribute("x2", x2); l.setAttribute("y2", y2);
  l.setAttribute("stroke", "#8a96a3"); l.setAttribute("stroke-width", "2");
  $("ticks").appendChild(l); $("ticks").appendChild(t);
}

function list(id, items, render) {
  const ul = $(id); ul.textContent = "";
  for (const item of items) { const li = document.createElement("li"); render(li, item); ul.appendChild(li); }
}
function timed(li, time, text) {
  const t = document.createElement("span"); t.className = "t"; t.textContent = time;
  li.appendChild(t); li.appendChild(document.createTextNode(text));
}

function render(s) {
  lastState = s;
  renderStatus(s);
  const link = $("link");
  link.className = "badge " + s.link;
  link.dataset.state = s.link;
  if (s.link === "down" && s.retryMs !== undefined) retryAt = performance.now() + s.retryMs; else retryAt = 0;
  showLink();
  $("link-reason").textContent = s.link === "down" ? s.reason : s.linkName;
  const engine = $("engine");
  engine.textContent = s.engine ? "ON" : "OFF"; engine.className = "badge" + (s.engine ? " on" : ""); engine.dataset.on = s.engine;
  $("gear").textContent = s.direction === 1 ? "FORWARD" : "REVERSE"; $("gear").dataset.direction = s.direction;
  $("speed").textContent = s.speed;
  $("cap").textContent = "cap " + s.maxSpeed;
  $("needle").style.transform = `rotate(${gaugeAngle(s.speed)}deg)`;
  $("gauge-fill").setAttribute("d", s.speed > 0 ? arc(100, 110, 78, G0, gaugeAngle(s.speed)) : "");
  const [cx1, cy1] = polar(100, 110, 88, gaugeAngle(s.maxSpeed)), [cx2, cy2] = polar(100, 110, 68, gaugeAngle(s.maxSpeed));
  const cap = $("cap-mark"); cap.setAttribute("x1", cx1); cap.setAttribute("y1", cy1); cap.setAttribute("x2", cx2); cap.setAttribute("y2", cy2);
  const wheel = $("wheel");
  wheel.style.transform = `rotate(${s.angle}deg)`; wheel.dataset.angle = s.angle;
  $("angle").textContent = (s.angle > 0 ? "+" : "") + s.angle + "°";
  $("range").textContent = "A " + s.range; $("range").dataset.range = s.range;
  for (const seg of document.querySelectorAll(".seg")) seg.classList.toggle("active", Number(seg.dataset.range) === s.range);
  $("frames-sent").textContent = s.framesSent;
  list("frames", s.frames, (li, f) => timed(li, f.time, f.text));
  list("car", s.car, (li, l) => timed(li, l.time, l.text));
  $("car").scrollTop = $("car").scrollHeight;
  list("inputs", s.inputs.length ? s.inputs : ["none"], (li, t) => { li.textContent = t; });
  list("notices", s.notices.slice(-8), (li, t) => { li.textContent = t; });
  list("feedback", (s.feedback || []).slice(-6), (li, f) => { timed(li, f.time, f.text); li.dataset.event = f.event; });
  if (s.bt) renderBluetooth(s.bt);
  renderDriver(s.driver || "");
  renderHandsFree(s.handsFree);
}

// The hands-free rider: arming, the board's centre of pressure as a dot in a square (front up), the
// weight, and a tilt throttle's pitch.
function renderHandsFree(hf) {
  $("handsfree-section").classList.toggle("hidden", !hf);
  if (!hf) return;
  $("hf-arming").textContent = hf.arming.toUpperCase(); $("hf-arming").dataset.arming = hf.arming;
  $("hf-arming").className = "badge" + (hf.arming === "armed" ? " on" : "");
  const board = hf.copX !== undefined;
  $("hf-board").classList.toggle("hidden", !board);
  if (board) {
    const dot = $("hf-dot");
    dot.setAttribute("cx", Math.max(-1, Math.min(1, hf.copX)) * 100);
    dot.setAttribute("cy", -Math.max(-1, Math.min(1, hf.copY)) * 100);
    $("hf-cop").textContent = "CoP x " + hf.copX.toFixed(2) + " y " + hf.copY.toFixed(2);
  } else $("hf-cop").textContent = "";
  $("hf-weight").textContent = hf.weight !== undefined ? hf.weight.toFixed(1) + " kg" : "";
  $("hf-pitch").textContent = hf.pitch !== undefined ? "pitch " + (hf.pitch > 0 ? "+" : "") + hf.pitch.toFixed(1) + "°" : "";
}

// The Bluetooth search: its sentence and the devices found, each with a button that saves it as the link.
function renderBluetooth(bt) {
  const status = $("bt-status");
  status.dataset.phase = bt.phase;
  if (bt.message) status.textContent = bt.message;
  $("bt-scan").disabled = bt.phase === "searching";
  $("bt-scan").textContent = bt.phase === "searching" ? "Searching…" : "Search for cars";
  list("bt-devices", bt.devices, (li, d) => {
    const details = [];
    if (d.rssi !== undefined) details.push(d.rssi + " dBm");
    if (d.transport) details.push(d.transport);
    if (d.paired) details.push("paired");
    if (d.serial) details.push("serial port");
    if (d.profile) details.push(d.profile);
    const label = document.createElement("span");
    label.textContent = d.addr + "  " + (d.name || "(no name)") + (details.length ? "  [" + details.join(", ") + "]" : "");
    const use = document.createElement("button");
    // The server says what a pick saves: ble://NAME for a BLE UART car, rfcomm://ADDRESS otherwise.
    const url = d.url || "rfcomm://" + d.addr;
    use.textContent = bt.saved === url ? "saved" : "Use this car";
    use.title = "save link.url = \"" + url + "\"";
    use.dataset.addr = d.addr;
    use.dataset.url = url;
    use.addEventListener("click", () => send({ c: "bt_pick", addr: d.addr }));
    li.appendChild(label); li.appendChild(use);
  });
}

function showLink() {
  if (!lastState) return;
  const link = $("link");
  if (lastState.link === "up") link.textContent = "connected";
  else if (lastState.link === "connecting") link.textContent = "connecting…";
  else if (lastState.link === "down") {
    const left = retryAt ? Math.max(0, (retryAt - performance.now()) / 1000) : 0;
    link.textContent = retryAt ? `down · retry in ${left.toFixed(1)} s` : "down";
  } else link.textContent = lastState.link;
}
setInterval(showLink, 100);

function rejected(reason) {
  const ul = $("rejections"); const li = document.createElement("li");
  li.textContent = "refused by carbridge: " + reason; ul.appendChild(li);
  while (ul.children.length > 5) ul.removeChild(ul.firstChild);
  document.body.dataset.rejections = String(Number(document.body.dataset.rejections || 0) + 1);
}

function send(message) {
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(message));
}

function onHello(m) {
  hello = m;
  $("controls-section").classList.toggle("hidden", !(m.controls || m.tokenLogin));
  $("controls").classList.toggle("hidden", !m.controls && !m.tokenLogin);
  $("login").classList.toggle("hidden", m.controls || !m.tokenLogin);
  $("controls-note").textContent = m.controls ? "" : (m.reason || "");
  // The Bluetooth search and the car it saves are the operator's (the server refuses a driver's too).
  $("bt-section").classList.toggle("hidden", !(m.role === "operator" || (!m.controls && m.tokenLogin)));
  $("drive-link-section").classList.toggle("hidden", !m.controls);
  document.body.dataset.controls = m.controls;
  document.body.dataset.role = m.role || "viewer";
  clearInterval(pingTimer);
  if (m.controls) pingTimer = setInterval(() => send({ c: "ping" }), 250);
}

// The join QR code (an SVG made by carbridge) and its URL; a join message without a URL hides them.
function renderJoin(j) {
  $("join-section").classList.toggle("hidden", !j.url);
  $("join-qr").innerHTML = j.url ? j.svg : "";
  $("join-url").textContent = j.url || "";
  $("join-section").dataset.url = j.url || "";
}

function connect() {
  ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws");
  ws.onopen = () => { $("conn").textContent = ""; document.body.dataset.connected = "true"; };
  ws.onmessage = (event) => {
    let m; try { m = JSON.parse(event.data); } catch (e) { return; }
    if (m.type === "state") render(m); else if (m.type === "hello") onHello(m); else if (m.type === "rejected") rejected(m.reason); else if (m.type === "join") renderJoin(m);
  };
  ws.onclose = (event) => {
    document.body.dataset.connected = "false";
    clearInterval(pingTimer);
    $("conn").textContent = `carbridge unreachable (${event.code}${event.reason ? " " + event.reason : ""}); retrying…`;
    setTimeout(connect, 1000);
  };
}

const buttons = { "btn-engine": { c: "engine" }, "btn-speed-up": { c: "speed_up" }, "btn-speed-down": { c: "speed_down" }, "btn-gear": { c: "gear" } };
for (const [id, message] of Object.entries(buttons)) $(id).addEventListener("click", () => send(message));
$("bt-scan").addEventListener("click", () => send({ c: "bt_scan" }));
for (let n = 1; n <= 5; n++) $("btn-f" + n).addEventListener("click", () => send({ c: "f", n }));
// The slider: at most 20 steer messages a second; letting go centres it, like a stick's spring.
const steer = $("steer");
function flushSteer() { if (steerValue !== steerSent) { steerSent = steerValue; send({ c: "steer", deg: steerValue }); } }
steer.addEventListener("input", () => {
  steerValue = Number(steer.value);
  if (!steerTimer) { flushSteer(); steerTimer = setTimeout(function tick() { steerTimer = null; flushSteer(); }, 50); }
});
function centre() { steer.value = 0; steerValue = 0; flushSteer(); }
steer.addEventListener("pointerup", centre);
steer.addEventListener("touchend", centre);
// Who drives from a browser (a phone on the driver's page, or this page's slider), in the inputs list.
function renderDriver(driver) { document.body.dataset.driver = driver; }
// A hidden or closing page stops driving (the server does not rely on it: its silence rule stops the car too).
function leave() { send({ c: "release" }); }
document.addEventListener("visibilitychange", () => { if (document.visibilityState === "hidden") leave(); });
window.addEventListener("pagehide", leave);
connect();
</script>
</body>
</html>
"""#
}
