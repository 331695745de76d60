/// The driver's page (`GET /drive`, where a join code leads): the customer's phone app on one screen, no
/// scrolling, in landscape and in portrait. The wheel (or the thumb stick) in the middle, Speed− and Speed+
/// under the thumbs, Engine, Gear, F1–F5, the speed, the link and the car's last line; one line that says
/// why the car stopped or what changed. Like the operator's page: one string, no build step, nothing from
/// elsewhere. It only reports (raw orientation with its count of sensor events, the stick's x/y, button
/// presses); the server does the steering math and decides who drives.
enum DriverPage {
    /// The web app manifest: the page installs as a full-screen app named carbridge.
    static let manifest = #"""
{
  "name": "carbridge: drive the car",
  "short_name": "carbridge",
  "description": "Drive the robot car from this phone: tilt it like a wheel or use the thumb stick.",
  "start_url": "/drive",
  "scope": "/",
  "display": "fullscreen",
  "orientation": "any",
  "background_color": "#111418",
  "theme_color": "#111418",
  "icons": [
    { "src": "/icon.svg", "sizes": "any", "type": "image/svg+xml", "purpose": "any" },
    { "src": "/icon.svg", "sizes": "any", "type": "image/svg+xml", "purpose": "maskable" }
  ]
}
"""#

    /// The app's icon: a steering wheel on the page's background, inside the maskable safe zone.
    static let icon = #"""
<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 512 512"><rect width="512" height="512" fill="#111418"/><circle cx="256" cy="256" r="150" fill="none" stroke="#4aa3ff" stroke-width="36"/><circle cx="256" cy="256" r="34" fill="#e8edf2"/><path d="M222 256H112M290 256h110M256 290v116" stroke="#e8edf2" stroke-width="30" stroke-linecap="round"/></svg>
"""#

    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
<meta name="theme-color" content="#111418">
<meta name="mobile-web-app-capable" content="yes">
<meta name="apple-mobile-web-app-capable" content="yes">
<link rel="manifest" href="/manifest.webmanifest">
<link rel="icon" href="/icon.svg" type="image/svg+xml">
<title>carbridge: drive</title>
<style>
:root { --bg:#111418; --panel:#1b2027; --text:#e8edf2; --dim:#a3aeba; --ok:#3ad17a; --warn:#f2b63c; --bad:#ff7070; --accent:#4aa3ff; --btn:#2d3745; }
* { box-sizing:border-box; }
html, body { margin:0; height:100%; background:var(--bg); }
body { color:var(--text); font:16px/1.25 system-ui, sans-serif; -webkit-user-select:none; user-select:none;
  -webkit-tap-highlight-color:transparent; overscroll-behavior:none; }
/* One screen: the grid is the viewport's size and only the middle cell (the wheel or stick) gives way. */
#app { height:100vh; height:100dvh; width:100%; display:grid; gap:6px;
  padding:max(6px, env(safe-area-inset-top)) max(6px, env(safe-area-inset-right)) max(6px, env(safe-area-inset-bottom)) max(6px, env(safe-area-inset-left));
  grid-template-columns:minmax(88px, 1fr) minmax(0, 2.4fr) minmax(88px, 1fr);
  grid-template-rows:auto minmax(0, 1fr) auto auto;
  grid-template-areas:"bar bar bar" "down centre up" "engine why gear" "tools tools tools"; }
@media (orientation: portrait) {
  #app { grid-template-columns:1fr 1fr; grid-template-rows:auto minmax(0, 1fr) auto auto auto auto;
    grid-template-areas:"bar bar" "centre centre" "why why" "down up" "engine gear" "tools tools"; }
}
#bar { grid-area:bar; display:flex; flex-wrap:wrap; align-items:center; gap:4px 10px; min-width:0; }
#centre { grid-area:centre; position:relative; min-height:0; min-width:0; display:flex; align-items:center; justify-content:center;
  container-type:size; }
#why-box { grid-area:why; min-width:0; display:flex; flex-direction:column; justify-content:center; gap:2px; }
#btn-speed-down { grid-area:down; } #btn-speed-up { grid-area:up; }
#btn-engine { grid-area:engine; } #btn-gear { grid-area:gear; }
#tools { grid-area:tools; display:flex; flex-wrap:wrap; gap:6px; justify-content:center; }
#tools .group { display:flex; gap:6px; flex-wrap:nowrap; }
.badge { font-weight:700; padding:.15em .5em; border-radius:.35em; background:#2a3038; white-space:nowrap; }
.badge.up, .badge.on { background:var(--ok); color:#000; }
.badge.connecting { background:var(--warn); color:#000; }
.badge.down, .badge.closed { background:var(--bad); color:#000; }
#speed-box { font-weight:800; font-size:1.5em; white-space:nowrap; }
#speed-box small { font-size:.55em; font-weight:600; color:var(--dim); }
#driver { color:var(--dim); font-size:.9em; }
#driver[data-you=true] { color:var(--ok); }
button { font:inherit; font-weight:650; color:var(--text); background:var(--btn); border:0; border-radius:10px;
  min-width:44px; min-height:44px; padding:0 .6em; touch-action:manipulation; }
button:active { background:#3d4a5c; }
button[aria-pressed=true] { background:var(--accent); color:#000; }
button[aria-disabled=true] { background:#232a33; color:var(--dim); outline:1px dashed #55606c; outline-offset:-4px; }
button.thumb { font-size:clamp(18px, 4.5vmin, 30px); min-height:56px; }
#btn-engine[data-on=true] { background:var(--ok); color:#000; }
#why { font-weight:650; font-size:1em; min-height:1.25em; }
#why[data-kind=stop] { color:var(--bad); }
#why[data-kind=refused] { color:var(--warn); }
#why[data-kind=ok] { color:var(--ok); }
#car-line { color:var(--dim); font:13px/1.3 ui-monospace, monospace; white-space:nowrap; overflow:hidden; text-overflow:ellipsis; }
#wheel-view { height:100%; width:100%; max-height:100%; display:block; }
#wheel { transform-box:fill-box; transform-origin:center; transition:transform 60ms linear; }
.seg { fill:none; stroke:#2f3742; stroke-width:9; } .seg.active { stroke:var(--accent); }
#angle { position:absolute; right:4px; bottom:2px; font-weight:700; color:var(--dim); font-size:.95em; }
/* A circle as large as the middle cell allows (its smaller side, through the cell's container units). */
#stick { position:relative; width:min(100cqw, 100cqh); height:min(100cqw, 100cqh); flex:none; border-radius:50%; background:#2a3038;
  touch-action:none; border:2px solid #3a4452; }
#knob { position:absolute; left:39%; top:39%; width:22%; height:22%; border-radius:50%; background:var(--accent); pointer-events:none; }
.hidden { display:none !important; }
</style>
</head>
<body data-controls="false" data-role="viewer" data-connected="false" data-phone-mode="off" data-vibrations="0" data-rejections="0">
<div id="app">
  <header id="bar">
    <h1 class="hidden">carbridge</h1>
    <span id="link" class="badge down" role="status">connecting…</span>
    <span id="speed-box" aria-label="speed"><span id="speed">0</span> <small>/ <span id="cap">240</span></small></span>
    <span id="engine" class="badge" data-on="false">ENGINE OFF</span>
    <span id="gear" class="badge" data-direction="1">FORWARD</span>
    <span id="driver" data-you="false">nobody drives</span>
  </header>
  <button id="btn-speed-down" class="thumb needs-engine" aria-label="Speed minus">Speed −</button>
  <div id="centre">
    <svg id="wheel-view" viewBox="0 0 200 200" role="img" aria-label="steering wheel">
\#(PageParts.wheel)
    </svg>
    <div id="stick" class="hidden" role="slider" aria-label="thumb stick: up is speed, sideways steers" aria-valuemin="-1" aria-valuemax="1" aria-valuenow="0"><div id="knob"></div></div>
    <span id="angle">0°</span>
  </div>
  <div id="why-box">
    <div id="why" role="status" aria-live="polite" data-kind="info">connecting to carbridge…</div>
    <div id="car-line" aria-label="the car's last line"></div>
  </div>
  <button id="btn-speed-up" class="thumb needs-engine" aria-label="Speed plus">Speed +</button>
  <button id="btn-engine" data-on="false">Engine</button>
  <button id="btn-gear" class="needs-engine" aria-label="Gear: forward or reverse">Gear</button>
  <nav id="tools" aria-label="more controls">
    <span class="group"><button id="btn-f1" class="needs-engine">F1</button><button id="btn-f2" class="needs-engine">F2</button><button id="btn-f3" class="needs-engine">F3</button><button id="btn-f4" class="needs-engine">F4</button><button id="btn-f5" class="needs-engine">F5</button></span>
    <span class="group" role="group" aria-label="how to steer"><button id="mode-off" aria-pressed="true">Off</button><button id="mode-tilt" aria-pressed="false">Tilt</button><button id="mode-stick" aria-pressed="false">Stick</button></span>
    <span class="group hidden" id="tilt-opts" role="group" aria-label="how the phone is held"><button id="hold-wheel" aria-pressed="false">Wheel</button><button id="hold-flat" aria-pressed="true">Flat</button><button id="btn-straight">Straight</button></span>
    <span class="group hidden" id="stick-opts" role="group" aria-label="stick form"><button id="form-polar" aria-pressed="true">Polar</button><button id="form-xy" aria-pressed="false">X/Y</button></span>
  </nav>
</div>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
const NS = "http://www.w3.org/2000/svg";
let ws = null, hello = null, state = null, pingTimer = null, retryAt = 0;
// Driving: the page reports; the server maps, decides who drives and stops the car on silence.
let mode = "off", hold = "flat", stickForm = "polar", tiltHz = 20, heartbeatMs = 166, inputTimeoutMs = 500;
let orientation = null, seq = 0, sensorAt = 0, lastSend = 0, lastChange = 0, sendDue = null, heartbeat = null, sensorWatch = null;
let stickXY = null, stickHeld = false, wakeLock = null, wakeWanted = false, hiddenWhileDriving = false;
let said = null, engineTappedAt = 0, modeChangedAt = 0;

\#(PageParts.wheelScript)
// What the driver reads: the newest event (a stop, a refusal, a change) for 5 s, else what stands now.
function say(text, kind) {
  said = { text, kind, at: performance.now() };
  if ((kind === "stop" || kind === "refused") && typeof navigator.vibrate === "function") {
    try { navigator.vibrate(kind === "stop" ? [150, 80, 150] : 90); } catch (e) { /* no vibration motor */ }
    document.body.dataset.vibrations = String(Number(document.body.dataset.vibrations) + 1);
  }
  showWhy();
}
function standing() {
  if (!ws || ws.readyState !== WebSocket.OPEN) return ["Not connected to carbridge: retrying…", "stop"];
  if (!hello || !state) return ["connecting to carbridge…", "info"];
  if (!hello.controls) return [hello.reason || "This page only watches.", "info"];
  if (state.link !== "up") return ["The link to the car is " + state.link + (state.reason ? " (" + state.reason + ")" : "") + ": the car is stopped.", "stop"];
  if (!state.engine) return ["Engine off: tap Engine to drive.", "info"];
  if (state.driver && state.driver !== hello.you) return [state.driver + " is driving: wait for your turn.", "info"];
  if (mode === "off") return ["Tap Tilt or Stick to steer, Speed + to go.", "info"];
  if (mode === "tilt") {
    if (!orientation) return ["Tilt: waiting for this phone's motion sensor…", "info"];
    return [hold === "wheel" ? "Tilt: turn the phone like a steering wheel." : "Tilt: hold it flat, tip it left or right.", "ok"];
  }
  return ["Stick: drag the dot; up is speed, sideways steers.", "ok"];
}
// True when a stop was just said (the server's own words for this phone come before the state that shows it).
function recentlyStopped() { return said && said.kind === "stop" && performance.now() - said.at < 1500; }
function showWhy() {
  let [text, kind] = standing();
  if (said && performance.now() - said.at < 5000) ({ text, kind } = said);
  const why = $("why");
  if (why.textContent !== text) why.textContent = text;
  why.dataset.kind = kind;
}
setInterval(showWhy, 500);

function send(message) {
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(message));
}

function render(s) {
  const before = state;
  state = s;
  const link = $("link");
  link.className = "badge " + s.link; link.dataset.state = s.link;
  retryAt = s.link === "down" && s.retryMs !== undefined ? performance.now() + s.retryMs : 0;
  showLink();
  $("speed").textContent = s.speed; $("speed").dataset.speed = s.speed;
  $("cap").textContent = s.maxSpeed;
  const engine = $("engine");
  engine.textContent = s.engine ? "ENGINE ON" : "ENGINE OFF"; engine.className = "badge" + (s.engine ? " on" : ""); engine.dataset.on = s.engine;
  $("btn-engine").dataset.on = s.engine; $("btn-engine").setAttribute("aria-pressed", String(!!s.engine));
  $("gear").textContent = s.direction === 1 ? "FORWARD" : "REVERSE"; $("gear").dataset.direction = s.direction;
  const wheel = $("wheel");
  wheel.style.transform = `rotate(${s.angle}deg)`; wheel.dataset.angle = s.angle;
  $("angle").textContent = (s.angle > 0 ? "+" : "") + Math.round(s.angle) + "°";
  for (const seg of document.querySelectorAll(".seg")) seg.classList.toggle("active", Number(seg.dataset.range) === s.range);
  const last = s.car && s.car.length ? s.car[s.car.length - 1] : null;
  // The car's low battery first (the run's [car] low_battery alarm), else its last line.
  $("car-line").textContent = s.batteryWarning ? "⚠ " + s.batteryWarning : last ? "car: " + last.text : "";
  const driver = s.driver || "", you = hello && driver !== "" && driver === hello.you;
  $("driver").dataset.you = String(!!you); $("driver").dataset.driver = driver;
  $("driver").textContent = driver === "" ? "nobody drives" : you ? "you drive" : driver + " drives";
  enable();
  if (before) explain(before, s);
  showWhy();
}

// A change the driver did not make, said in words: the link, the engine, someone else taking over.
function explain(before, s) {
  const latest = (n) => n && n.length ? n[n.length - 1] : "";
  const newNotice = latest(s.notices) !== "" && latest(s.notices) !== latest(before.notices);
  // A notice as the log has it ("12:00:01.250 notice carbridge: turn over: …"), without the log's prefix.
  const notice = latest(s.notices).replace(/^[0-9:.]+ [a-z]+ [A-Za-z0-9_.-]+: /, "");
  if (before.link === "up" && s.link !== "up")
    say("Stopped: the link to the car went " + s.link + (s.reason ? " (" + s.reason + ")" : "") + ".", "stop");
  else if (before.link !== "up" && s.link === "up") say("The car is connected again.", "ok");
  else if (before.engine && !s.engine) {
    if (recentlyStopped()) return;
    if (performance.now() - engineTappedAt < 2000) say("Engine off.", "info");
    else say("Stopped: the engine was turned off" + (newNotice ? " (" + notice + ")" : "") + ".", "stop");
  } else if (before.speed > 0 && s.speed === 0 && s.engine && newNotice && !recentlyStopped()) say("Stopped: " + notice + ".", "stop");
  const was = before.driver || "", now = s.driver || "";
  if (hello && was !== now && now !== "" && now !== hello.you && mode !== "off") say(now + " drives now: wait for your turn.", "refused");
}

function showLink() {
  if (!state) return;
  const link = $("link");
  if (state.link === "up") link.textContent = "car connected";
  else if (state.link === "connecting") link.textContent = "connecting…";
  else if (state.link === "down") {
    const left = retryAt ? Math.max(0, (retryAt - performance.now()) / 1000) : 0;
    link.textContent = retryAt ? `car down · retry ${left.toFixed(1)} s` : "car down";
  } else link.textContent = "car " + state.link;
}
setInterval(showLink, 200);

// With the engine off every control but Engine is off, as in the customer's app; a view-only page has none.
function enable() {
  const controls = !!(hello && hello.controls), engine = !!(state && state.engine);
  for (const b of document.querySelectorAll("button")) {
    const off = !controls || (b.classList.contains("needs-engine") && !engine);
    if (off) b.setAttribute("aria-disabled", "true"); else b.removeAttribute("aria-disabled");
  }
}
function refusedHere(button) {
  if (button.getAttribute("aria-disabled") !== "true") return false;
  say(!hello || !hello.controls ? (hello && hello.reason) || "This page only watches." : "Engine off: tap Engine first.", "refused");
  return true;
}

function onHello(m) {
  const had = hello && hello.controls;
  hello = m;
  document.body.dataset.controls = String(!!m.controls);
  document.body.dataset.role = m.role || (m.controls ? "operator" : "viewer");
  if (m.tiltHz) tiltHz = m.tiltHz;
  if (m.heartbeatMs) heartbeatMs = m.heartbeatMs;
  if (m.inputTimeoutMs) inputTimeoutMs = m.inputTimeoutMs;
  clearInterval(pingTimer);
  if (m.controls) pingTimer = setInterval(() => send({ c: "ping" }), 250);
  if (had && !m.controls) {
    // The turn is over (or the session went): stop reporting, say why.
    if (mode !== "off") setMode("off", true);
    say("Stopped: " + (m.reason || "this phone may no longer drive") + ".", "stop");
  }
  if (mode !== "off") startReporting();
  enable();
  showWhy();
}

function connect() {
  ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws");
  ws.onopen = () => { document.body.dataset.connected = "true"; showWhy(); };
  ws.onmessage = (event) => {
    let m; try { m = JSON.parse(event.data); } catch (e) { return; }
    if (m.type === "state") render(m);
    else if (m.type === "hello") onHello(m);
    else if (m.type === "stopped") {
      // The server's words for a silence this page caused itself by being hidden: the page's own say it better.
      if (!hiddenWhileDriving && !(said && /hidden/.test(said.text) && performance.now() - said.at < 5000)) say(m.reason, "stop");
    }
    else if (m.type === "rejected") {
      document.body.dataset.rejections = String(Number(document.body.dataset.rejections) + 1);
      say(m.reason.replace(/^refused: /, "Refused: "), "refused");
    }
  };
  ws.onclose = (event) => {
    document.body.dataset.connected = "false";
    clearInterval(pingTimer);
    if (hello && hello.controls && mode !== "off") say("Lost the connection to carbridge: the car stops; reconnecting…", "stop");
    hello = null;
    setTimeout(connect, 1000);
  };
}

// The reports: a reading that changed goes out at once when the last change sent is at least one period
// (1/tilt_hz) old, else at that period's end (at most tilt_hz changes a second); while nothing changes the
// heartbeat re-sends the newest reading when nothing was sent for heartbeatMs (a third of the server's
// silence rule). A heartbeat does not hold back the next change: that would make a change after stillness
// wait for the period as often as not.
function screenAngle() {
  const a = screen.orientation && typeof screen.orientation.angle === "number" ? screen.orientation.angle
    : (typeof window.orientation === "number" ? window.orientation : 0);
  return [0, 90, 180, 270, -90].includes(a) ? a : 0;
}
function reading() {
  if (mode === "tilt" && orientation)
    return { c: "tilt", beta: orientation.beta, gamma: orientation.gamma, angle: screenAngle(), hold, seq };
  if (mode === "stick" && stickXY) return { c: "stick", x: stickXY.x, y: stickXY.y, form: stickForm };
  return null;
}
function report() {
  const m = reading(); if (!m) return;
  send(m); lastSend = performance.now();
}
function sendChange() { report(); lastChange = lastSend; }
function changed() {
  const wait = lastChange + 1000 / tiltHz - performance.now();
  if (wait <= 0) { clearTimeout(sendDue); sendDue = null; sendChange(); }
  else if (!sendDue) sendDue = setTimeout(() => { sendDue = null; sendChange(); }, wait);
}
function startReporting() {
  clearInterval(heartbeat);
  heartbeat = setInterval(() => { if (performance.now() - lastSend >= heartbeatMs - 4) report(); }, Math.max(20, heartbeatMs / 4));
}
function stopReporting() {
  clearInterval(heartbeat); heartbeat = null; clearTimeout(sendDue); sendDue = null;
}

// The screen stays on while this phone drives (Screen Wake Lock), and is let go when it stops.
async function keepAwake(on) {
  wakeWanted = on;
  if (on && !wakeLock && navigator.wakeLock && typeof navigator.wakeLock.request === "function") {
    try {
      const lock = await navigator.wakeLock.request("screen");
      lock.addEventListener("release", () => { if (wakeLock === lock) wakeLock = null; document.body.dataset.wake = wakeLock ? "held" : "none"; });
      if (wakeWanted && !wakeLock) wakeLock = lock; else lock.release().catch(() => {});
    } catch (e) { /* refused (battery saver, or not allowed here): the screen may dim */ }
  } else if (!on && wakeLock) {
    const lock = wakeLock; wakeLock = null; lock.release().catch(() => {});
  }
  document.body.dataset.wake = wakeLock ? "held" : "none";
}

function pressed(ids, on) { for (const id of ids) $(id).setAttribute("aria-pressed", String(id === on)); }
function setMode(next, quiet) {
  const before = mode, moving = state && state.speed > 0 && state.driver === (hello && hello.you);
  mode = next; modeChangedAt = performance.now();
  pressed(["mode-off", "mode-tilt", "mode-stick"], "mode-" + next);
  $("tilt-opts").classList.toggle("hidden", next !== "tilt");
  $("stick-opts").classList.toggle("hidden", next !== "stick");
  $("stick").classList.toggle("hidden", next !== "stick");
  $("wheel-view").classList.toggle("hidden", next === "stick");
  document.body.dataset.phoneMode = next;
  clearTimeout(sensorWatch); sensorWatch = null;
  stickXY = null; stickHeld = false; $("knob").style.transform = "";
  // Leaving a mode is this phone letting go: the server stops the car (lost input), and the speed starts from 0.
  if (before !== "off") send({ c: "release" });
  if (next === "off") {
    stopReporting(); keepAwake(false);
    if (!quiet && moving) say("Stopped: you switched steering off.", "stop");
    showWhy();
    return;
  }
  if (!quiet && before !== "off" && moving) say("Stopped: you switched from " + before + " to " + next + "; Speed + to go again.", "stop");
  startReporting(); keepAwake(true);
  if (next === "tilt") watchSensor();
  showWhy();
}
// In tilt mode the page watches its own sensor too: silent as long as the server's rule, it says so.
function watchSensor() {
  clearTimeout(sensorWatch);
  sensorWatch = setTimeout(function check() {
    if (mode !== "tilt") return;
    const since = performance.now() - Math.max(sensorAt, modeChangedAt);
    if (!orientation && since >= 1500) {
      say("No tilt from this phone: " + (window.isSecureContext ? "it has no motion sensor, or the permission was refused. Use Stick."
        : "tilt needs a secure page (https://)."), "stop");
    } else if (orientation && since >= inputTimeoutMs) {
      if (!said || said.kind !== "stop" || !/sensor/.test(said.text) || performance.now() - said.at > 4000)
        say("Stopped: this phone's tilt sensor went silent. Hold the phone in your hands, or switch to Stick.", "stop");
    }
    sensorWatch = setTimeout(check, 250);
  }, 250);
}

window.addEventListener("deviceorientation", (e) => {
  if (typeof e.beta !== "number" || typeof e.gamma !== "number") return;
  seq++; sensorAt = performance.now();
  const next = { beta: Math.max(-180, Math.min(180, e.beta)), gamma: Math.max(-90, Math.min(90, e.gamma)) };
  const moved = !orientation || Math.abs(next.beta - orientation.beta) >= 0.05 || Math.abs(next.gamma - orientation.gamma) >= 0.05;
  orientation = next;
  if (mode === "tilt" && moved) changed();
});
// Motion events fire at a steady rate even when nothing turns (orientation events only on a change), so a
// phone held very still still proves its sensor; the report's seq counts both.
window.addEventListener("devicemotion", (e) => {
  const g = e.accelerationIncludingGravity;
  if (g && typeof g.x === "number") { seq++; sensorAt = performance.now(); }
});

function tap(id, action) {
  $(id).addEventListener("click", (e) => { if (refusedHere(e.currentTarget)) return; action(); });
}
tap("btn-engine", () => { engineTappedAt = performance.now(); send({ c: "engine" }); });
tap("btn-speed-up", () => send({ c: "speed_up" }));
tap("btn-speed-down", () => send({ c: "speed_down" }));
tap("btn-gear", () => send({ c: "gear" }));
for (let n = 1; n <= 5; n++) tap("btn-f" + n, () => send({ c: "f", n }));
tap("mode-off", () => setMode("off"));
tap("mode-stick", () => setMode("stick"));
tap("mode-tilt", () => {
  // iOS asks for the sensor only from a tap.
  const D = window.DeviceOrientationEvent;
  if (D && typeof D.requestPermission === "function") {
    D.requestPermission().then((answer) => {
      if (answer === "granted") setMode("tilt"); else say("Tilt needs the motion permission (refused): use Stick.", "refused");
    }).catch((e) => say("Tilt needs the motion permission: " + e, "refused"));
  } else setMode("tilt");
});
tap("hold-wheel", () => { hold = "wheel"; pressed(["hold-wheel", "hold-flat"], "hold-wheel"); say("Tilt: turn the phone like a steering wheel.", "info"); changed(); });
tap("hold-flat", () => { hold = "flat"; pressed(["hold-wheel", "hold-flat"], "hold-flat"); say("Tilt: hold it flat, tip it left or right.", "info"); changed(); });
tap("form-polar", () => { stickForm = "polar"; pressed(["form-polar", "form-xy"], "form-polar"); });
tap("form-xy", () => { stickForm = "xy"; pressed(["form-polar", "form-xy"], "form-xy"); });
tap("btn-straight", () => { send({ c: "straight" }); say("This tilt is straight ahead now.", "info"); });

const stickPad = $("stick");
function stickAt(event) {
  const r = stickPad.getBoundingClientRect(), radius = r.width / 2;
  let x = (event.clientX - r.left - radius) / radius, y = -(event.clientY - r.top - radius) / radius;
  const d = Math.hypot(x, y); if (d > 1) { x /= d; y /= d; }
  stickXY = { x: Math.round(x * 1000) / 1000, y: Math.round(y * 1000) / 1000 };
  $("knob").style.transform = `translate(${x * radius}px, ${-y * radius}px)`;
  stickPad.setAttribute("aria-valuenow", String(stickXY.y));
  changed();
}
stickPad.addEventListener("pointerdown", (e) => {
  if (!hello || !hello.controls) return say((hello && hello.reason) || "This page only watches.", "refused");
  stickPad.setPointerCapture(e.pointerId); stickHeld = true; stickAt(e);
});
stickPad.addEventListener("pointermove", (e) => { if (stickHeld) stickAt(e); });
// Let go, the stick springs back to the centre and keeps reporting it (at rest: θ 0, speed 0), so a lifted
// thumb is not lost input; leaving stick mode, or the page, is.
function stickRelease() {
  if (!stickHeld) return;
  stickHeld = false;
  stickXY = { x: 0, y: 0 }; report();
  $("knob").style.transform = "";
}
stickPad.addEventListener("pointerup", stickRelease);
stickPad.addEventListener("pointercancel", stickRelease);

// Full screen from the first tap (a browser allows it only from one).
document.addEventListener("pointerdown", () => {
  const root = document.documentElement;
  if (!document.fullscreenElement && typeof root.requestFullscreen === "function")
    root.requestFullscreen({ navigationUI: "hide" }).then(() => { document.body.dataset.fullscreen = "true"; }).catch(() => {});
}, { once: true, capture: true });

// A hidden or closing page stops driving (the server does not rely on it: its silence rule stops the car too).
function leave() {
  if (mode !== "off") { hiddenWhileDriving = true; setMode("off", true); } else send({ c: "release" });
}
function back() {
  if (!hiddenWhileDriving) return;
  hiddenWhileDriving = false;
  say("Stopped while this page was hidden: tap Tilt or Stick to drive again.", "stop");
}
document.addEventListener("visibilitychange", () => { if (document.visibilityState === "hidden") leave(); else back(); });
// A frozen page (the browser's lifecycle: a tab in the background) is thawed by `resume`, maybe before it is visible.
document.addEventListener("freeze", leave);
document.addEventListener("resume", back);
window.addEventListener("pagehide", leave);
window.addEventListener("pageshow", back);
enable();
connect();
</script>
</body>
</html>
"""#
}
