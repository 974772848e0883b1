"""The page :mod:`tui.html_replay` fills in: its style and script, inline.

Everything the page shows comes from the JSON block (``{{data}}``) and is put
in as text (``textContent``), never as markup. The look follows the TUI's dark
theme: cards with their suit symbols, red hearts and diamonds (and the red
joker), black spades and clubs, a hidden card as ``▒▒``; the step shown is
the reversed line of the story, as in the replay screen. Text contrast is
at least 4.5:1 everywhere (the lowest, a red card, is 5.6:1; the browser test
measures every text on the page).
"""

PAGE = """<!doctype html>
<html lang="{{lang}}">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy"
 content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{{title}}</title>
<style>
:root { color-scheme: dark; }
body { margin: 0; background: #1e1e1e; color: #e0e0e0;
  font: 15px/1.45 ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
header { background: #015fa8; color: #ffffff; padding: 4px 12px; font-weight: bold; }
main { padding: 8px 12px; max-width: 1100px; }
#verdict { border-left: 4px solid; padding: 4px 10px; margin: 6px 0; background: #262626; }
#verdict.clean { border-color: #4ebf71; color: #7ee2a0; }
#verdict.cheating { border-color: #e0566f; color: #ff9aa9; }
#verdict.unfinished { border-color: #ffa62b; color: #ffcc66; }
#verdict .kind { font-weight: bold; text-transform: uppercase; margin-right: 8px; }
#controls { display: flex; gap: 6px; align-items: center; flex-wrap: wrap; margin: 8px 0; }
button { background: #333333; color: #e0e0e0; border: 1px solid #5a5a5a; border-radius: 3px;
  font: inherit; padding: 2px 10px; cursor: pointer; }
button:hover, button:focus { background: #444444; outline: 2px solid #ffa62b; }
#position { min-width: 10em; text-align: center; font-weight: bold; }
#slider { width: 100%; accent-color: #ffa62b; margin: 2px 0 8px; }
#now { font-size: 17px; font-weight: bold; color: #ffffff; padding: 4px 0; min-height: 1.5em;
  white-space: pre-wrap; }
#seats { display: grid; grid-template-columns: repeat(auto-fill, minmax(300px, 1fr));
  gap: 8px; margin: 8px 0; }
.seat { background: #262626; border: 1px solid #444444; padding: 6px 8px; }
.seat.turn { border-color: #ffa62b; }
.seat.mover .who { text-decoration: underline; }
.who { font-weight: bold; color: #ffffff; }
.muted { color: #ababab; }
.cards { display: flex; flex-wrap: wrap; gap: 3px; margin-top: 4px; min-height: 1.6em; }
.card { display: inline-block; background: #fafafa; color: #111111; font-weight: bold;
  border-radius: 3px; padding: 0 4px; min-width: 2.2em; text-align: center; }
.card.red { color: #c8102e; }
.card.hidden { background: #3a3a3a; color: #c8c8c8; font-weight: normal; }
#rows { border-top: 1px solid #444444; padding-top: 6px; }
.row { display: flex; gap: 8px; align-items: baseline; margin: 2px 0; }
.row .label { color: #ababab; flex: 0 0 11em; }
.row .text { flex: 0 1 auto; min-width: 0; }
.row .cards { margin-top: 0; flex: 1 1 auto; }
#story { margin-top: 10px; border-top: 1px solid #444444; padding-top: 6px; }
#story ol { list-style: none; padding: 0; margin: 0; }
#story li { white-space: pre-wrap; cursor: pointer; padding: 0 4px; }
#story li.at { background: #e0e0e0; color: #1e1e1e; }
footer { color: #ababab; padding: 8px 12px; font-size: 13px; }
</style>
</head>
<body>
<header id="title"></header>
<main>
<div id="verdict"></div>
<nav id="controls" aria-label="steps">
<button id="first" type="button"></button>
<button id="back" type="button"></button>
<span id="position" aria-live="polite"></span>
<button id="next" type="button"></button>
<button id="last" type="button"></button>
</nav>
<input id="slider" type="range" min="1" max="1" value="1">
<div id="now"></div>
<section id="seats"></section>
<section id="rows"></section>
<section id="story"><div class="muted" id="story-title"></div><ol id="lines"></ol></section>
</main>
<footer><div id="keys"></div><div id="revealed"></div><div id="fingerprints"></div></footer>
<script type="application/json" id="game">{{data}}</script>
<script>
"use strict";
const data = JSON.parse(document.getElementById("game").textContent);
const W = data.words, steps = data.steps, WINDOW = 12;
const CARRIED = ["hands", "seats", "rows", "turn"];
for (let i = 1; i < steps.length; i++) {
  if ("rowdiff" in steps[i]) {
    steps[i].rows = steps[i - 1].rows.slice();
    for (const [k, row] of steps[i].rowdiff) steps[i].rows[k] = row;
  }
  for (const k of CARRIED) if (!(k in steps[i])) steps[i][k] = steps[i - 1][k];
}
const $ = (id) => document.getElementById(id);
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = text;
  return e;
}
function say(text, fields) {
  return text.replace(/\\{(\\w+)\\}/g, (m, k) => (k in fields ? String(fields[k]) : m));
}
function card(face) {
  if (face === null || face === undefined) return el("span", "card hidden", "\\u2592\\u2592");
  const red = /[\\u2665\\u2666]/.test(face) || face === "RJ";
  return el("span", red ? "card red" : "card black", face);
}
function cards(list) {
  const box = el("span", "cards");
  for (const face of list || []) box.append(card(face));
  return box;
}
let at = 0;
function show(i) {
  if (!steps.length) { $("now").textContent = W["no moves in this log"]; return; }
  at = Math.max(0, Math.min(steps.length - 1, i));
  const step = steps[at];
  $("position").textContent = say(W["move {at}/{total}"], {at: at + 1, total: steps.length});
  $("slider").value = String(at + 1);
  $("now").textContent = step.n + "  " + step.text;
  document.body.dataset.turn = String(step.n);
  const seats = $("seats");
  seats.replaceChildren();
  data.seats.forEach((name, s) => {
    const box = el("div", "seat" + (step.turn === s ? " turn" : "") +
      (step.seat === s ? " mover" : ""));
    box.dataset.seat = String(s);
    const head = el("div");
    head.append(el("span", "who", (step.turn === s ? "\\u25b6 " : "") + name));
    const note = (step.seats || [])[s] || [0, null];
    head.append(el("span", "muted", "  " + W["hand"] + ": " + note[0]));
    if (note[1]) { head.append(el("span", "muted", "  ")); head.append(card(note[1])); }
    box.append(head);
    const hand = cards((step.hands || [])[s]);
    hand.classList.add("hand");
    box.append(hand);
    seats.append(box);
  });
  const rows = $("rows");
  rows.replaceChildren();
  for (const [label, text, list] of step.rows || []) {
    const row = el("div", "row");
    row.append(el("span", "label", label));
    if (text) row.append(el("span", "text", text));
    if (list && list.length) row.append(cards(list));
    rows.append(row);
  }
  const lines = $("lines");
  lines.replaceChildren();
  const start = Math.max(0, Math.min(at - WINDOW / 2, steps.length - WINDOW));
  for (const other of steps.slice(start, start + WINDOW)) {
    const li = el("li", other.n === step.n ? "at" : "",
      String(other.n).padStart(4) + "  " + other.text);
    li.addEventListener("click", () => go(other.n - 1));
    lines.append(li);
  }
}
function go(i) {
  show(i);
  if (!steps.length) return;
  const hash = "#turn=" + steps[at].n;
  if (location.hash === hash) return;
  try { history.replaceState(null, "", hash); } catch (e) { location.replace(hash); }
}
function fromHash() {
  const m = /^#turn=(\\d+)$/.exec(location.hash);
  if (m) show(Number(m[1]) - 1);
}
$("title").textContent = W["nodealer replay"] + " \\u00b7 " + data.title +
  (data.table ? " \\u00b7 " + data.table.slice(0, 16) : "");
const verdict = $("verdict");
verdict.className = data.verdict.kind;
verdict.append(el("span", "kind", W[data.verdict.kind]));
for (const line of data.verdict.lines) verdict.append(el("div", "", line));
$("first").textContent = "\\u25c0\\u25c0 " + W["first"];
$("back").textContent = "\\u25c0 " + W["previous"];
$("next").textContent = W["next"] + " \\u25b6";
$("last").textContent = W["last"] + " \\u25b6\\u25b6";
$("first").addEventListener("click", () => go(0));
$("back").addEventListener("click", () => go(at - 1));
$("next").addEventListener("click", () => go(at + 1));
$("last").addEventListener("click", () => go(steps.length - 1));
const slider = $("slider");
slider.max = String(Math.max(1, steps.length));
slider.setAttribute("aria-label", W["step through the game"]);
slider.addEventListener("input", () => go(Number(slider.value) - 1));
document.addEventListener("keydown", (e) => {
  if (e.target === slider || e.altKey || e.ctrlKey || e.metaKey) return;
  const moves = {ArrowRight: at + 1, ArrowDown: at + 1, ArrowLeft: at - 1, ArrowUp: at - 1,
                 Home: 0, End: steps.length - 1};
  if (e.key in moves) { e.preventDefault(); go(moves[e.key]); }
});
window.addEventListener("hashchange", fromHash);
$("story-title").textContent = W["the game's story"];
$("keys").textContent = W["keys: \\u2190 \\u2192 step, Home/End, or drag the slider; " +
  "the address (#turn=N) points at this moment"];
$("revealed").textContent = data.revealed ? W["every hand as the log's final reveals show it"]
  : W["only public cards: the log has no final reveals"];
$("fingerprints").textContent =
  data.seats.map((s, i) => s + ": " + (data.fingerprints[i] || "")).join("   ");
show(0);
fromHash();
</script>
</body>
</html>
"""
