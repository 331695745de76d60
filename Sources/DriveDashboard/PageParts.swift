/// What the operator's page and the driver's page share: the steering wheel and its range segments, drawn
/// the same way on both (an SVG of viewBox 0 0 200 200 around (100, 110)).
enum PageParts {
    /// The wheel's SVG elements: `#segments` (filled by `wheelScript`) and `#wheel`, which the pages rotate by θ.
    static let wheel = #"""
      <g id="segments"></g>
      <g id="wheel">
        <circle cx="100" cy="110" r="70" fill="none" stroke="#cfd8e3" stroke-width="12"/>
        <circle cx="100" cy="110" r="14" fill="#cfd8e3"/>
        <line x1="86" y1="110" x2="32" y2="110" stroke="#cfd8e3" stroke-width="9"/>
        <line x1="114" y1="110" x2="168" y2="110" stroke="#cfd8e3" stroke-width="9"/>
        <line x1="100" y1="124" x2="100" y2="178" stroke="#cfd8e3" stroke-width="9"/>
        <rect x="94" y="34" width="12" height="16" rx="3" fill="#4aa3ff"/>
      </g>
"""#

    /// `polar` and `arc` (SVG geometry in degrees, 0 up, clockwise), and the range segments drawn into
    /// `#segments`. Needs `$` and `NS` defined before it.
    static let wheelScript = #"""
function polar(cx, cy, r, deg) { const a = (deg - 90) * Math.PI / 180; return [cx + r * Math.cos(a), cy + r * Math.sin(a)]; }
function arc(cx, cy, r, from, to) {
  const [x1, y1] = polar(cx, cy, r, from), [x2, y2] = polar(cx, cy, r, to);
  return `M ${x1} ${y1} A ${r} ${r} 0 ${to - from > 180 ? 1 : 0} 1 ${x2} ${y2}`;
}
// Range segments around the wheel: A −2 … 2 over θ −90…−60, −60…−15, −15…15, 15…60, 60…90.
for (const [a, from, to] of [[-2, -90, -60], [-1, -60, -15], [0, -15, 15], [1, 15, 60], [2, 60, 90]]) {
  const p = document.createElementNS(NS, "path");
  p.setAttribute("d", arc(100, 110, 90, from + 1, to - 1));
  p.setAttribute("class", "seg"); p.dataset.range = a; $("segments").appendChild(p);
}
"""#
}
