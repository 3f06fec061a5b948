/**
 * The page's HTML and CSS, as string modules: they ship inside the package (dist/ and src/) and need no
 * copy step, no CDN and no network. The HTML has no inline script or style (the CSP forbids both); the
 * token reaches the assets through their URLs and the script through `data-token`.
 */

const escapeAttr = (s: string): string => s.replace(/[&"<>']/g, (c) => `&#${c.charCodeAt(0)};`);

export function pageHtml(token: string, namespace: string): string {
  const t = encodeURIComponent(token);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>fh board · ${escapeAttr(namespace)}</title>
<link rel="stylesheet" href="/app.css?token=${t}">
<script defer src="/app.js?token=${t}"></script>
<script defer src="/flows.js?token=${t}"></script>
</head>
<body data-token="${escapeAttr(token)}" data-namespace="${escapeAttr(namespace)}">
<header class="top"><span class="brand">fh board</span><span class="ns" id="ns"></span><span class="conn" id="conn"></span></header>
<main class="layout">
  <div class="left"><section class="flows" id="flows"></section><section class="inbox" id="inbox"></section></div>
  <section class="session" id="session"><div class="empty">Pick a session from the inbox.</div></section>
</main>
</body>
</html>
`;
}

export const PAGE_CSS: string = `
:root { --bg:#f6f7f9; --panel:#fff; --ink:#1d2330; --mute:#6b7280; --line:#e3e6eb; --accent:#2f6fde; --warn:#b7791f; --bad:#c53030; --ok:#2f855a;
  --sys:#7c8ba1; --tools:#9f7aea; --mem:#38b2ac; --sum:#ed8936; --conv:#4299e1; --tres:#e53e3e; --res:#cbd5e0; }
* { box-sizing: border-box; }
body { margin:0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color:var(--ink); background:var(--bg); }
button, select, input, textarea { font: inherit; }
button { border:1px solid var(--line); background:#fff; border-radius:6px; padding:3px 10px; cursor:pointer; color:var(--ink); }
button:hover { border-color:var(--accent); }
button.primary { background:var(--accent); border-color:var(--accent); color:#fff; }
button.danger { color:var(--bad); border-color:#f3c4c4; }
input, select, textarea { border:1px solid var(--line); border-radius:6px; padding:3px 8px; background:#fff; }
.top { display:flex; gap:12px; align-items:center; padding:8px 16px; background:#1d2330; color:#fff; }
.brand { font-weight:700; letter-spacing:.02em; }
.ns { color:#c3cad6; } .conn { margin-left:auto; font-size:12px; color:#9fb0c8; }
.layout { display:grid; grid-template-columns: 400px 1fr; height: calc(100vh - 40px); }
.left { display:flex; flex-direction:column; border-right:1px solid var(--line); background:var(--panel); overflow:hidden; }
.inbox { flex:1; overflow:auto; }
.flows { max-height:38%; overflow:auto; border-bottom:2px solid var(--line); }
.flows h3 { margin:0; padding:8px 12px; font-size:12px; text-transform:uppercase; letter-spacing:.05em; color:var(--mute); position:sticky; top:0; background:var(--panel); }
.flows > .note { padding:0 12px 8px; }
.frow { padding:6px 12px; border-top:1px solid var(--line); cursor:pointer; display:flex; gap:6px; align-items:center; flex-wrap:wrap; }
.frow:hover { background:#f0f4fb; } .frow.sel { background:#e6eefc; }
.frow .title { font-weight:600; } .frow .note { flex-basis:100%; overflow:hidden; text-overflow:ellipsis; white-space:nowrap; }
.chip.f-running { background:#e3ecfd; color:#1e4fa8; } .chip.f-waiting { background:#fdf1dc; color:#8a5a0b; }
.chip.f-completed { background:#e1f3e8; color:#22643f; } .chip.f-failed, .chip.f-terminated, .chip.f-timed_out { background:#f4e1e1; color:#8b2b2b; }
.flowview { grid-column: 1 / 3; display:flex; flex-direction:column; overflow:hidden; }
.fbody { flex:1; display:grid; grid-template-columns: 1fr 340px; overflow:hidden; }
.fgraph { overflow:auto; padding:10px; border-right:1px solid var(--line); }
.fnode rect { fill:#fff; stroke:#a0aec0; stroke-width:1.5; }
.fnode text { text-anchor:middle; font-size:12px; fill:var(--ink); } .fnode .fstate { font-size:10.5px; fill:var(--mute); }
.fnode.st-running rect { fill:#e3ecfd; stroke:#2f6fde; } .fnode.st-waiting rect { fill:#fdf1dc; stroke:#b7791f; }
.fnode.st-succeeded rect { fill:#e1f3e8; stroke:#2f855a; } .fnode.st-failed rect { fill:#f9e0e0; stroke:#c53030; }
.fnode.st-skipped rect { fill:#f4f4f5; stroke:#cbd5e0; stroke-dasharray:4 3; } .fnode.st-skipped text { fill:#a0aec0; }
.fnode.cur rect { stroke:#1d2330; stroke-width:3; }
.fedge path { fill:none; stroke:#8795a8; stroke-width:1.4; } .fhead { fill:#8795a8; }
.flabel { font-size:11px; fill:#5b3c9b; }
dl.fctx { display:grid; grid-template-columns: auto 1fr; gap:2px 10px; font-size:12.5px; margin:0; }
dl.fctx dt { color:var(--mute); } dl.fctx dd { margin:0; white-space:pre-wrap; overflow-wrap:anywhere; max-height:160px; overflow:auto; }
.fgate .btns { flex-wrap:wrap; } .fgate button { max-width:100%; overflow-wrap:anywhere; text-align:left; }
ol.fevents { margin:0; padding-left:18px; font-size:12px; color:var(--mute); }
.filters { display:flex; gap:6px; padding:10px; border-bottom:1px solid var(--line); position:sticky; top:0; background:var(--panel); flex-wrap:wrap; align-items:center; }
.filters input { width:120px; } .filters input[type=checkbox] { width:auto; margin:0 4px 0 0; }
.filters label { display:flex; align-items:center; }
.pending { padding:4px 10px; white-space:pre-wrap; }
.count { color:var(--mute); font-size:12px; margin-left:auto; }
.row { padding:9px 12px; border-bottom:1px solid var(--line); cursor:pointer; display:grid; grid-template-columns: 16px 1fr auto; gap:2px 8px; }
.row:hover { background:#f0f4fb; } .row.sel { background:#e6eefc; }
/* At the end, so the rows under the pointer do not move. */ #rows[data-held]::after { content:"changes wait until the pointer leaves the list"; display:block; padding:4px 12px; font-size:12px; color:var(--mute); background:#fff8e1; }
.row .title { font-weight:600; overflow:hidden; text-overflow:ellipsis; white-space:nowrap; }
.row .meta { grid-column: 2 / 4; color:var(--mute); font-size:12px; display:flex; gap:6px; flex-wrap:wrap; align-items:center; }
.row .time { color:var(--mute); font-size:12px; white-space:nowrap; }
.row-actions { margin-left:auto; display:none; gap:4px; } .row:hover .row-actions, .row.sel .row-actions { display:flex; }
button.mini { padding:0 7px; font-size:11.5px; border-radius:5px; }
.dot { width:8px; height:8px; border-radius:50%; background:var(--accent); margin-top:6px; } .dot.read { background:transparent; }
.flag { color:var(--warn); }
.chip { display:inline-block; padding:0 7px; border-radius:10px; font-size:11.5px; background:#edf0f5; color:#3b4556; }
.chip.s-in-progress { background:#e3ecfd; color:#1e4fa8; } .chip.s-needs-review { background:#fdf1dc; color:#8a5a0b; }
.chip.s-done { background:#e1f3e8; color:#22643f; } .chip.s-cancelled { background:#f4e1e1; color:#8b2b2b; }
.chip.label { background:#f3eefc; color:#5b3c9b; }
.session { display:grid; grid-template-columns: 1fr 320px; overflow:hidden; }
.empty { padding:40px; color:var(--mute); }
.main { display:flex; flex-direction:column; overflow:hidden; border-right:1px solid var(--line); }
.shead { padding:10px 16px; background:var(--panel); border-bottom:1px solid var(--line); display:flex; flex-direction:column; gap:8px; }
.shead .line { display:flex; gap:8px; align-items:center; flex-wrap:wrap; }
.shead h2 { margin:0; font-size:17px; }
.shead label { font-size:12px; color:var(--mute); display:flex; gap:4px; align-items:center; }
.tabs { display:flex; gap:4px; } .tabs button.on { background:#1d2330; color:#fff; border-color:#1d2330; }
.convo { flex:1; overflow:auto; padding:14px 18px; display:flex; flex-direction:column; gap:10px; }
.msg { max-width: 860px; padding:9px 12px; border-radius:10px; white-space:pre-wrap; word-wrap:break-word; overflow-wrap:anywhere; }
.msg.user { align-self:flex-end; background:#e6eefc; }
.msg.assistant { background:var(--panel); border:1px solid var(--line); }
.msg.live { border-style:dashed; }
.subagent { border-left:3px solid var(--line); padding:4px 0 4px 10px; margin:6px 0; display:flex; flex-direction:column; gap:6px; }
.subagent > .who { font-size:12px; color:var(--mute); }
.subagent .sub-text { font-size:13px; }
.who { font-size:11px; color:var(--mute); text-transform:uppercase; letter-spacing:.05em; display:block; margin-bottom:2px; }
.thinking { color:var(--mute); font-style:italic; }
.tool { border:1px solid var(--line); border-left:3px solid var(--tools); border-radius:8px; background:#fbfaff; max-width:860px; }
.tool > .th { padding:6px 10px; font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size:12.5px; }
.tool pre, .audit pre { margin:0; padding:6px 10px; background:#f7f7fb; font-size:12px; white-space:pre-wrap; overflow-wrap:anywhere; max-height:320px; overflow:auto; }
.tool details summary { cursor:pointer; padding:4px 10px; color:var(--mute); font-size:12px; }
.tool.err { border-left-color:var(--bad); }
.decision { border:1px dashed var(--sum); background:#fff8f0; border-radius:8px; padding:8px 12px; max-width:860px; }
.decision .dt { font-weight:600; color:#9c4a08; font-size:12.5px; }
.decision pre { white-space:pre-wrap; margin:6px 0 0; font-size:12.5px; }
.approval { border:1px solid #f0c36d; background:#fffaf0; border-radius:8px; padding:10px 12px; max-width:860px; display:flex; flex-direction:column; gap:6px; }
.approval .btns { display:flex; gap:6px; align-items:center; } .approval input { flex:1; }
.md { background:#fff; border:1px solid var(--line); border-radius:6px; padding:4px 12px; font-size:13.5px; overflow-wrap:anywhere; }
.md h3, .md h4, .md h5, .md h6 { margin:8px 0 4px; } .md p { margin:4px 0; } .md ul, .md ol { margin:4px 0; padding-left:22px; }
.md pre { background:#f7f7fb; padding:6px 8px; white-space:pre-wrap; font-size:12px; } .md code { background:#f1f1f6; padding:0 3px; border-radius:3px; }
.compose { display:flex; gap:8px; padding:10px 16px; border-top:1px solid var(--line); background:var(--panel); }
.compose textarea { flex:1; height:52px; resize:vertical; }
.files { display:flex; gap:6px; flex-wrap:wrap; padding:4px 14px; } .chip.file { margin-left:6px; } .chip.file button { border:0; background:none; padding:0 0 0 4px; cursor:pointer; }
.side { overflow:auto; padding:14px; background:var(--panel); display:flex; flex-direction:column; gap:14px; }
.side h3 { margin:0 0 6px; font-size:13px; text-transform:uppercase; letter-spacing:.05em; color:var(--mute); }
.bar { position:relative; display:flex; height:22px; border-radius:6px; overflow:hidden; background:#eef1f5; border:1px solid var(--line); }
.bar > span { height:100%; } .thr { position:absolute; top:-3px; bottom:-3px; width:2px; background:#1d2330; }
.seg-system { background:var(--sys); } .seg-tools { background:var(--tools); } .seg-memory { background:var(--mem); }
.seg-summary { background:var(--sum); } .seg-conversation { background:var(--conv); } .seg-toolResults { background:var(--tres); } .seg-attachments { background:#d69e2e; } .seg-reserve { background:repeating-linear-gradient(45deg,#cbd5e0,#cbd5e0 4px,#e2e8f0 4px,#e2e8f0 8px); }
table.layers { width:100%; border-collapse:collapse; font-size:12.5px; margin-top:8px; }
table.layers td { padding:2px 0; } table.layers td.n { text-align:right; font-variant-numeric: tabular-nums; }
.sw { display:inline-block; width:10px; height:10px; border-radius:2px; margin-right:6px; vertical-align:-1px; }
.hint { background:#fff4e0; border:1px solid #f0c36d; color:#7a4b00; border-radius:6px; padding:6px 8px; font-size:12.5px; }
.kv { display:grid; grid-template-columns: auto 1fr; gap:2px 10px; font-size:12.5px; } .kv dt { color:var(--mute); } .kv dd { margin:0; text-align:right; }
.audit { flex:1; overflow:auto; padding:14px 18px; display:flex; flex-direction:column; gap:10px; }
.audit pre { max-height:none; overflow:visible; background:transparent; }
.verdict { padding:8px 10px; border-radius:6px; } .verdict.ok { background:#e1f3e8; color:#22643f; } .verdict.bad { background:#f9e0e0; color:#8b2b2b; }
.note { color:var(--mute); font-size:12px; }
.error { color:var(--bad); font-size:12.5px; }
`;
