/** The dashboard's stylesheet: a responsive grid of cards, readable contrast, visible focus. */
export const DASHBOARD_CSS = `
:root { --bg: #f6f7f9; --card: #fff; --ink: #1b1f24; --muted: #57606a; --accent: #0a58ca; --bar: #2f6fdb; --line: #c2410c; --ok: #1a7f37; --bad: #b42318; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: var(--bg); color: var(--ink); }
.skip { position: absolute; left: -999px; } .skip:focus { left: 8px; top: 8px; background: #fff; padding: 6px; z-index: 9; }
.top { display: flex; justify-content: space-between; align-items: center; gap: 12px; padding: 12px 20px; background: #0d1b2a; color: #fff; flex-wrap: wrap; }
.top h1 { font-size: 18px; margin: 0; } .sub { font-weight: 400; opacity: .8; }
.who { font-family: ui-monospace, monospace; font-size: 13px; word-break: break-all; }
main { padding: 16px; display: block; max-width: 1400px; margin: 0 auto; }
#dashboard { display: grid; grid-template-columns: repeat(auto-fit, minmax(340px, 1fr)); gap: 16px; }
#dashboard[hidden] { display: none; }
.card { background: var(--card); border-radius: 8px; padding: 14px 16px; box-shadow: 0 1px 2px rgba(0,0,0,.08); min-width: 0; }
.wide { grid-column: 1 / -1; } .narrow { max-width: 560px; margin: 24px auto; }
h2 { font-size: 16px; margin: 0 0 10px; }
.head { display: flex; justify-content: space-between; align-items: center; flex-wrap: wrap; gap: 8px; }
.controls { display: flex; gap: 6px; align-items: center; flex-wrap: wrap; }
label { font-weight: 600; font-size: 13px; } form label { display: block; margin: 10px 0 4px; }
input, textarea, select { font: inherit; padding: 6px 8px; border: 1px solid #8c959f; border-radius: 6px; background: #fff; color: var(--ink); }
form input, form textarea { width: 100%; font-family: ui-monospace, monospace; font-size: 13px; }
button { font: inherit; padding: 7px 12px; border-radius: 6px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
button[type=button]:not([data-export]) { background: #fff; color: var(--accent); }
button:disabled { opacity: .5; cursor: default; }
:focus-visible { outline: 3px solid #f59e0b; outline-offset: 2px; }
.row { display: flex; gap: 8px; align-items: center; margin-top: 12px; } .wrap { flex-wrap: wrap; }
.hint { color: var(--muted); font-size: 13px; }
.status { min-height: 1.4em; margin: 0 0 8px; } .status.error { color: var(--bad); font-weight: 600; }
.kpis { display: flex; flex-wrap: wrap; gap: 10px 28px; margin: 6px 0 10px; }
.kpis div { min-width: 120px; } .kpis dt { color: var(--muted); font-size: 12px; } .kpis dd { margin: 0; font-size: 18px; font-weight: 600; font-variant-numeric: tabular-nums; }
.chart { margin: 0; } .chart svg { width: 100%; height: auto; display: block; }
.chart figcaption { color: var(--muted); font-size: 12px; }
.chart .bar { fill: var(--bar); } .chart .mrr { fill: none; stroke: var(--line); stroke-width: 2.5; } .chart text { fill: var(--muted); font-size: 11px; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid #e5e7eb; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.mono { font-family: ui-monospace, monospace; font-size: 12px; }
.badge { padding: 1px 7px; border-radius: 9px; font-size: 12px; background: #e5e7eb; }
.badge.active { background: #dafbe1; color: #116329; } .badge.paused { background: #fff8c5; color: #7d4e00; } .badge.ended { background: #eee; color: #444; }
.feed { list-style: none; padding: 0; margin: 0; max-height: 360px; overflow-y: auto; }
.feed li { padding: 6px 2px; border-bottom: 1px solid #eef0f2; display: flex; justify-content: space-between; gap: 8px; font-size: 13px; }
.feed li.new { animation: flash 2s ease-out; } @keyframes flash { from { background: #fff3bf; } to { background: transparent; } }
.dot { display: inline-block; width: 9px; height: 9px; border-radius: 50%; background: #aaa; vertical-align: middle; } .dot.on { background: var(--ok); }
.ok { color: var(--ok); } .bad { color: var(--bad); }
@media (max-width: 600px) { main { padding: 8px; } .kpis dd { font-size: 16px; } .top h1 { font-size: 16px; } }
@media (prefers-reduced-motion: reduce) { .feed li.new { animation: none; } }
`;
