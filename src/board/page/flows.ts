/**
 * The board page's flow runs: the list (beside the session inbox) and, for the run picked, its graph
 * drawn as SVG, each node coloured and labelled by its state, the current node marked, the context,
 * the newest events, and a waiting gate's choices as buttons. Served as its own script (`/flows.js`),
 * like page/script.ts: one self-contained function typed against the DOM, sent as its source text, so it
 * must not reference anything outside its body. The two scripts share the main pane through one DOM
 * event, `fh-select` ({ kind: 'session' | 'flow', id }): whoever opens something says so, the other lets go.
 *
 * Live: the run's stream (`/api/flows/<id>/events`, Server-Sent Events) says something happened; the
 * page then fetches the run's view again (its state query), which is what it draws. `fh-end` closes the
 * stream when the run ends.
 *
 * Node labels, edge labels, context values and every other text come from the user's DOT or the model:
 * they reach the DOM through `textContent` and text nodes only, never as markup.
 */

export function flowsScript(): string {
  return `(${flowsPage.toString()})();\n`;
}

/* eslint-disable */
function flowsPage(): void {
  type Json = any;
  const TOKEN = document.body.dataset.token || '';
  const SVG = 'http://www.w3.org/2000/svg';
  const st: { selected: string | null; source: EventSource | null; timer: number | null; view: Json | null } = { selected: null, source: null, timer: null, view: null };

  /** An HTML element; strings become text nodes. */
  function h(tag: string, props: Record<string, any> = {}, ...children: Array<Node | string | null | undefined | false>): HTMLElement {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(props)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') el.className = String(v);
      else if (k.startsWith('on') && typeof v === 'function') (el as any)[k] = v;
      else el.setAttribute(k, String(v));
    }
    for (const c of children) if (c !== null && c !== undefined && c !== false) el.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    return el;
  }
  /** An SVG element: attributes set one by one (numbers and class names), text only through `text`. */
  function s(tag: string, attrs: Record<string, string | number> = {}, text?: string): SVGElement {
    const el = document.createElementNS(SVG, tag) as SVGElement;
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
    if (text !== undefined) el.textContent = text;
    return el;
  }
  const $ = (id: string) => document.getElementById(id);
  const cut = (t: string, n: number) => (t.length > n ? t.slice(0, n - 1) + '…' : t);

  async function api(path: string, body?: unknown): Promise<Json> {
    const headers: Record<string, string> = { 'x-fh-board-token': TOKEN };
    if (body !== undefined) { headers['x-fh-board'] = '1'; headers['content-type'] = 'application/json'; }
    const res = await fetch(path, { method: body === undefined ? 'GET' : 'POST', headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'omit' });
    const data = await res.json().catch(() => ({}));
    if (!res.ok) {
      const e = data.error || {};
      throw new Error((e.code ? e.code + ': ' : '') + (e.message || 'HTTP ' + res.status));
    }
    return data;
  }

  // ---------- the list ----------
  async function loadList(): Promise<void> {
    const root = $('flows');
    if (!root) return;
    let data: Json;
    try {
      data = await api('/api/flows');
    } catch (err) {
      root.replaceChildren(h('h3', {}, 'Flow runs'), h('div', { class: 'error' }, String((err as Error).message)));
      return;
    }
    const rows = data.flows.map((f: Json) => {
      const el = h('div', { class: 'frow' + (f.id === st.selected ? ' sel' : ''), 'data-flow': f.id, role: 'button', tabindex: '0' },
        h('span', { class: 'title' }, f.name),
        // A run waiting at a gate is RUNNING to Temporal: its memo names the gates (see flow-source).
        f.waitingGates
          ? h('span', { class: 'chip f-waiting', title: 'waiting at ' + f.waitingGates.join(', ') }, 'waiting')
          : h('span', { class: 'chip f-' + String(f.status).toLowerCase() }, String(f.status).toLowerCase()),
        h('span', { class: 'note' }, f.waitingGates ? 'at ' + f.waitingGates.join(', ') + ' · ' + f.id : f.id));
      el.onclick = () => openFlow(f.id);
      return el;
    });
    root.replaceChildren(
      h('h3', {}, 'Flow runs', h('span', { class: 'count' }, ' ' + rows.length)),
      ...(rows.length ? rows : [h('div', { class: 'note' }, data.available ? 'No flow runs in this namespace.' : 'This board shows no flow runs.')]));
  }

  // ---------- one run ----------
  function openFlow(id: string): void {
    document.dispatchEvent(new CustomEvent('fh-select', { detail: { kind: 'flow', id } }));
    st.selected = id;
    st.view = null;
    document.querySelectorAll('.frow').forEach((r) => r.classList.toggle('sel', (r as HTMLElement).dataset.flow === id));
    refresh().then(() => { if (st.selected === id) connect(id); });
  }

  function close(): void {
    if (st.source) st.source.close();
    st.source = null;
    st.selected = null;
    document.querySelectorAll('.frow').forEach((r) => r.classList.remove('sel'));
  }
  document.addEventListener('fh-select', (e) => { if ((e as CustomEvent).detail.kind !== 'flow') close(); });

  function connect(id: string): void {
    if (st.source) st.source.close();
    const es = new EventSource('/api/flows/' + encodeURIComponent(id) + '/events?token=' + encodeURIComponent(TOKEN));
    st.source = es;
    es.addEventListener('fh', () => { if (st.selected === id) later(100); });
    es.addEventListener('fh-end', () => { es.close(); if (st.selected === id) later(0); });
    es.addEventListener('fh-error', (m) => flash('live channel: ' + JSON.parse((m as MessageEvent).data).message));
  }

  function later(ms: number): void {
    if (st.timer !== null) clearTimeout(st.timer);
    st.timer = window.setTimeout(() => { st.timer = null; refresh(); }, ms);
  }

  async function refresh(): Promise<void> {
    const id = st.selected;
    if (!id) return;
    try {
      const v = await api('/api/flows/' + encodeURIComponent(id));
      if (st.selected !== id) return;
      st.view = v;
      render(v);
    } catch (err) {
      if (st.selected === id) $('session')!.replaceChildren(h('div', { class: 'empty error' }, 'Cannot open ' + id + ': ' + String((err as Error).message)));
    }
  }

  function flash(message: string): void {
    const el = document.querySelector('#flow .flash');
    if (el) el.textContent = message;
  }

  function render(v: Json): void {
    // A text the user is typing into the gate survives the redraw that every event causes.
    const typed = Array.from(document.querySelectorAll('#flow input[data-keep]')).map((i) => [(i as HTMLInputElement).dataset.keep, (i as HTMLInputElement).value]);
    const head = h('div', { class: 'shead' },
      h('div', { class: 'line' }, h('h2', {}, v.name), h('span', { class: 'chip f-' + v.status, id: 'flow-status' }, v.status),
        h('span', { class: 'note' }, v.id), h('span', { class: 'flash error' })),
      v.goal ? h('div', { class: 'note' }, 'Goal: ' + v.goal) : null,
      v.failure ? h('div', { class: 'error', id: 'flow-failure' }, (v.failedNode ? v.failedNode + ': ' : '') + v.failure) : null);
    const graph = h('div', { class: 'fgraph' });
    graph.appendChild(drawGraph(v));
    const side = h('aside', { class: 'side' });
    if (v.waitingGate) side.appendChild(gatePanel(v));
    side.appendChild(h('div', {}, h('h3', {}, 'Context'), h('dl', { class: 'fctx', id: 'flow-context' },
      ...v.context.flatMap((c: Json) => [h('dt', {}, c.key), h('dd', {}, c.value)]))));
    side.appendChild(h('div', {}, h('h3', {}, 'Events'), h('ol', { class: 'fevents', id: 'flow-events' },
      ...v.events.map((e: Json) => h('li', {}, eventText(e))))));
    $('session')!.replaceChildren(h('div', { class: 'flowview', id: 'flow', 'data-flow': v.id, 'data-status': v.status }, head, h('div', { class: 'fbody' }, graph, side)));
    for (const [k, val] of typed) {
      const i = document.querySelector('#flow input[data-keep="' + k + '"]') as HTMLInputElement | null;
      if (i) i.value = val || '';
    }
  }

  function drawGraph(v: Json): SVGElement {
    const svg = s('svg', { class: 'fsvg', id: 'flow-graph', width: v.width, height: v.height, viewBox: '0 0 ' + v.width + ' ' + v.height, role: 'img' });
    const defs = s('defs');
    const marker = s('marker', { id: 'farrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' });
    marker.appendChild(s('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'fhead' }));
    defs.appendChild(marker);
    svg.appendChild(defs);
    for (const e of v.edges) {
      const [x1, y1, x2, y2] = e.points;
      const d = e.back
        ? 'M ' + x1 + ' ' + y1 + ' C ' + (x1 + 60) + ' ' + y1 + ', ' + (x2 + 60) + ' ' + y2 + ', ' + x2 + ' ' + y2
        : 'M ' + x1 + ' ' + y1 + ' L ' + x2 + ' ' + y2;
      const g = s('g', { class: 'fedge', 'data-from': e.from, 'data-to': e.to });
      g.appendChild(s('path', { d, 'marker-end': 'url(#farrow)' }));
      if (e.label) g.appendChild(s('title', {}, e.label));
      if (e.label) g.appendChild(s('text', { x: e.back ? Math.max(x1, x2) + 48 : (x1 + x2) / 2 + 6, y: (y1 + y2) / 2 + 4, class: 'flabel' }, cut(e.label, 22)));
      svg.appendChild(g);
    }
    const W = v.node.width, H = v.node.height;
    for (const n of v.nodes) {
      const g = s('g', { class: 'fnode st-' + n.state + (n.current ? ' cur' : ''), 'data-node': n.id, 'data-state': n.state, transform: 'translate(' + n.x + ',' + n.y + ')' });
      g.appendChild(s('title', {}, n.label + ' (' + n.kind + '): ' + n.state));
      g.appendChild(s('rect', { width: W, height: H, rx: n.kind === 'gate' ? 2 : 9 }));
      g.appendChild(s('text', { x: W / 2, y: 18, class: 'fname' }, cut(n.label, 21)));
      g.appendChild(s('text', { x: W / 2, y: 34, class: 'fstate' }, (n.current ? '▶ ' : '') + n.state + (n.visits > 1 ? ' ×' + n.visits : '') + ' · ' + n.kind));
      svg.appendChild(g);
    }
    return svg;
  }

  function gatePanel(v: Json): HTMLElement {
    const gate = v.waitingGate;
    const node = v.nodes.find((n: Json) => n.id === gate.node);
    const text = h('input', { 'data-keep': 'text', 'aria-label': 'gate text', placeholder: 'text (for a free-form choice)' }) as HTMLInputElement;
    const typed = h('input', { 'data-keep': 'choice', 'aria-label': 'gate choice', placeholder: 'or type a choice' }) as HTMLInputElement;
    const error = h('div', { class: 'error', id: 'gate-error' });
    const answer = async (choice: string, freeform: boolean) => {
      error.textContent = '';
      try {
        await api('/api/flows/' + encodeURIComponent(v.id) + '/gate', { choice, gate: gate.node, ...(freeform && text.value ? { text: text.value } : {}) });
        later(50);
      } catch (err) {
        error.textContent = String((err as Error).message);
      }
    };
    return h('div', { class: 'approval fgate', id: 'flow-gate', 'data-gate': gate.node },
      h('div', {}, h('b', {}, 'Gate waiting: '), node ? node.label : gate.node),
      h('div', { class: 'btns' }, ...gate.choices.map((c: Json) =>
        h('button', { class: 'choice', 'data-key': c.key, onclick: () => answer(c.key, c.freeform) }, c.label + (c.freeform ? ' …' : '')))),
      gate.choices.some((c: Json) => c.freeform) ? text : null,
      h('div', { class: 'btns' }, typed, h('button', { id: 'gate-typed', onclick: () => answer(typed.value, false) }, 'Answer')),
      error);
  }

  function eventText(e: Json): string {
    const t = String(e.type).replace(/^flow\./, '');
    if (t === 'stage_started') return e.node + ' started (visit ' + e.visit + ')';
    if (t === 'stage_finished') return e.node + ' ' + e.status;
    if (t === 'context_updated') return e.node + ' set ' + e.keys.filter((k: string) => !k.startsWith('internal.')).join(', ');
    if (t === 'gate_waiting') return e.node + ' waits: ' + e.choices.join(' / ');
    if (t === 'gate_decided') return e.node + ' answered ' + e.label;
    if (t === 'branch_started') return e.node + ' started branch ' + e.branch;
    if (t === 'branch_joined') return e.node + ' joined branch ' + e.branch + ': ' + e.outcome;
    return t;
  }

  loadList();
  setInterval(loadList, 5000);
}
