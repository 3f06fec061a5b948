/**
 * The board page's script. It is written here as one self-contained function (typed against the DOM,
 * checked by tsc like the rest) and served as its own source text: `(${boardPage})()`. So it ships in the
 * package with no bundler or copy step. It must not reference anything outside its body.
 *
 * Model output is untrusted: every text from a session (prompts, replies, tool input and output,
 * summaries, titles, labels) reaches the DOM through `textContent` / text nodes only. Nothing here parses
 * HTML, sets a URL from data, or builds markup from strings, and the CSP forbids inline script anyway.
 */

export function pageScript(): string {
  return `(${boardPage.toString()})();\n`;
}

/* eslint-disable */
function boardPage(): void {
  type Json = any;
  /** A sub-agent's live work (its events on the session's stream): its current model call's text, running tools. */
  type SubLive = { path: string[]; text: string; tools: Map<string, Json>; done: boolean };
  /** What the running turn shows before its result is in the conversation; sub-agents by workflow id, in order of arrival. */
  type Live = { text: string; tools: Map<string, Json>; subs: Map<string, SubLive> };
  const emptyLive = (): Live => ({ text: '', tools: new Map(), subs: new Map() });
  /**
   * One opened session's live channel and all that is drawn from it: the stream's offset, the live text
   * and sub-agent boxes, the EventSource, a pending refresh, and an abort for its fetches. Opening another
   * session replaces it whole, so nothing of the one before (its offset, a late event, a fetch still in
   * flight) reaches the new one: every handler checks that its channel is still the open one.
   */
  type Channel = { id: string; offset: string | undefined; live: Live; source: EventSource | null; abort: AbortController; refreshTimer: number | null };
  const TOKEN = document.body.dataset.token || '';
  const state: {
    filter: { status: string; label: string; archived: boolean };
    selected: string | null;
    view: Json | null;
    tab: 'conversation' | 'audit';
    channel: Channel | null;
    seen: Record<string, string>;
    /** What the user is typing: a re-render (every live event) must not wipe it. */
    drafts: Record<string, string>;
    /** Files dropped on the message box or picked, sent with the next message (base64, as the action takes them). */
    files: Array<{ name: string; mediaType: string; data: string }>;
    /** The last refused action's message: kept across re-renders (a live event would wipe it) until the next action. */
    flash: string;
  } = {
    filter: { status: '', label: '', archived: false },
    selected: null,
    view: null,
    tab: 'conversation',
    channel: null,
    seen: JSON.parse(localStorage.getItem('fh-board-seen') || '{}'),
    drafts: {},
    files: [],
    flash: '',
  };
  /** An input whose text survives re-renders (kept in state.drafts under `key`). */
  function draft(tag: 'input' | 'textarea', key: string, initial: string, props: Record<string, any>): HTMLInputElement {
    const el = h(tag, { ...props, value: key in state.drafts ? state.drafts[key] : initial }) as HTMLInputElement;
    el.oninput = () => { state.drafts[key] = el.value; };
    return el;
  }
  const clearDraft = (key: string) => { delete state.drafts[key]; };

  /** Builds an element; children are nodes or strings (strings become text nodes, never markup). */
  function h(tag: string, props: Record<string, any> = {}, ...children: Array<Node | string | null | undefined | false>): HTMLElement {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(props)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') el.className = String(v);
      else if (k.startsWith('on') && typeof v === 'function') (el as any)[k] = v;
      else if (k === 'value') (el as HTMLInputElement).value = String(v);
      else if (k === 'checked') (el as HTMLInputElement).checked = Boolean(v);
      // Through the CSSOM: the CSP (style-src 'self') refuses style attributes set as markup.
      else if (k === 'style') el.style.cssText = String(v);
      else el.setAttribute(k, String(v));
    }
    for (const c of children) {
      if (c === null || c === undefined || c === false) continue;
      el.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    }
    return el;
  }
  const $ = (id: string) => document.getElementById(id)!;
  const fmt = (n: number) => (n >= 10000 ? (n / 1000).toFixed(1) + 'k' : String(n));
  const ago = (iso?: string | number) => {
    if (!iso) return '';
    const t = typeof iso === 'number' ? iso : Date.parse(iso);
    const s = Math.max(0, (Date.now() - t) / 1000);
    if (s < 60) return Math.round(s) + 's ago';
    if (s < 3600) return Math.round(s / 60) + 'm ago';
    if (s < 86400) return Math.round(s / 3600) + 'h ago';
    return new Date(t).toISOString().slice(0, 10);
  };
  const asText = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v, null, 2));

  async function api(path: string, init: { method?: string; body?: unknown; signal?: AbortSignal } = {}): Promise<Json> {
    const headers: Record<string, string> = { 'x-fh-board-token': TOKEN };
    if (init.method && init.method !== 'GET') {
      headers['x-fh-board'] = '1';
      headers['content-type'] = 'application/json';
    }
    const res = await fetch(path, { method: init.method || 'GET', headers, body: init.body === undefined ? undefined : JSON.stringify(init.body), credentials: 'omit', signal: init.signal });
    const body = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error((body.error && body.error.message) || 'HTTP ' + res.status);
    return body;
  }
  const sid = () => encodeURIComponent(state.selected || '');
  async function act(action: Json): Promise<void> {
    try {
      flash('');
      await api('/api/sessions/' + sid() + '/actions', { method: 'POST', body: action });
    } catch (err) {
      flash(String((err as Error).message));
    }
    scheduleRefresh(50);
    if (['title', 'flag', 'archive', 'status'].includes(action.kind)) setTimeout(loadInbox, 1200);
  }
  function flash(message: string) {
    state.flash = message;
    const el = document.querySelector('.flash');
    if (el) el.textContent = message;
  }

  /** Reads dropped or picked files as base64 (FileReader's data: URL, its prefix cut off) and shows them above the message box. */
  function addFiles(list: FileList | null | undefined): void {
    for (const f of Array.from(list || [])) {
      const reader = new FileReader();
      reader.onload = () => {
        const url = String(reader.result);
        state.files.push({ name: f.name, mediaType: f.type, data: url.slice(url.indexOf(',') + 1) });
        renderSession();
      };
      reader.readAsDataURL(f);
    }
  }

  // ---------- inbox ----------
  async function loadInbox(): Promise<void> {
    const q = new URLSearchParams();
    if (state.filter.status) q.set('status', state.filter.status);
    if (state.filter.label) q.set('label', state.filter.label);
    if (state.filter.archived) q.set('archived', '1');
    let data: Json;
    try {
      data = await api('/api/sessions?' + q.toString());
    } catch (err) {
      renderInbox([], String((err as Error).message));
      return;
    }
    $('ns').textContent = 'namespace ' + data.namespace;
    renderInbox(data.sessions, '');
  }

  /**
   * The inbox holds still under the mouse: a refresh that would add, remove or reorder rows waits while
   * the pointer is over them (the row being clicked must not move away), up to 10 s, and is drawn when
   * it leaves. A refresh that only changes rows in place, a filter change, or the user's own row action
   * (for 10 s after it: visibility shows a change a moment after it is made) draws at once.
   */
  const INBOX_HOLD_MS = 10_000;
  const inbox = { hovered: false, held: null as Json[] | null, heldSince: 0, shownIds: [] as string[], forceUntil: 0 };
  const drawAtOnce = () => { inbox.forceUntil = Date.now() + INBOX_HOLD_MS; };

  function renderInbox(rows: Json[], error: string): void {
    const ids = rows.map((r) => String(r.id));
    const moves = ids.length !== inbox.shownIds.length || ids.some((id, i) => id !== inbox.shownIds[i]);
    const now = Date.now();
    if (inbox.hovered && moves && now >= inbox.forceUntil && !(inbox.held && now - inbox.heldSince >= INBOX_HOLD_MS) && !error) {
      if (!inbox.held) inbox.heldSince = now;
      inbox.held = rows;
      // Says so on the rows (how many the waiting refresh has): the user sees why the list holds still.
      const shown = document.getElementById('rows');
      if (shown) shown.dataset.held = String(rows.length);
      return;
    }
    inbox.held = null;
    inbox.shownIds = ids;
    const root = $('inbox');
    // The filters are built once: a re-render of the rows every few seconds must not steal the focus.
    if (!document.getElementById('filters')) {
      const status = h('select', { 'aria-label': 'status filter', id: 'f-status', onchange: (e: Event) => { state.filter.status = (e.target as HTMLSelectElement).value; drawAtOnce(); loadInbox(); } },
        ...['', 'todo', 'in-progress', 'needs-review', 'done', 'cancelled'].map((s) => h('option', { value: s }, s || 'any status')));
      const label = h('input', { placeholder: 'label or name=value', 'aria-label': 'label filter', id: 'f-label',
        onchange: (e: Event) => { state.filter.label = (e.target as HTMLInputElement).value.trim(); drawAtOnce(); loadInbox(); } });
      const archived = h('label', { class: 'note' }, h('input', { type: 'checkbox', id: 'f-archived',
        onchange: (e: Event) => { state.filter.archived = (e.target as HTMLInputElement).checked; drawAtOnce(); loadInbox(); } }), ' archived');
      root.replaceChildren(
        h('div', { class: 'filters', id: 'filters' }, status, label, archived, h('span', { class: 'count', id: 'count' })),
        h('div', { class: 'error', id: 'inbox-error' }),
        h('div', { id: 'rows',
          onmouseenter: () => { inbox.hovered = true; },
          onmouseleave: () => { inbox.hovered = false; if (inbox.held) renderInbox(inbox.held, ''); } }),
      );
    }
    // Custom statuses (per agent) join the filter as sessions show them.
    const select = $('f-status') as HTMLSelectElement;
    for (const r of rows) if (![...select.options].some((o) => o.value === r.status)) select.appendChild(h('option', { value: r.status }, r.status));
    $('count').textContent = rows.length + (rows.length === 1 ? ' session' : ' sessions');
    $('inbox-error').textContent = error;
    $('rows').replaceChildren(...rows.map(inboxRow));
    delete $('rows').dataset.held;
  }

  function inboxRow(r: Json): HTMLElement {
    const unread = r.lastMessageAt && (!state.seen[r.id] || state.seen[r.id]! < r.lastMessageAt);
    const el = h('div', { class: 'row' + (r.id === state.selected ? ' sel' : ''), 'data-id': r.id, role: 'button', tabindex: '0',
      title: unread ? 'new messages since you last opened it here' : '' },
      h('span', { class: 'dot' + (unread ? '' : ' read') }),
      h('span', { class: 'title' }, r.flagged ? h('span', { class: 'flag', title: 'flagged' }, '⚑ ') : null, r.title || r.id),
      h('span', { class: 'time' }, ago(r.lastMessageAt || r.startTime)),
      h('span', { class: 'meta' },
        h('span', { class: 'chip s-' + r.status }, r.status),
        // Blocked on a person, not working: the status alone (in-progress) cannot tell (see sessions-list).
        r.waitingApprovals ? h('span', { class: 'chip f-waiting waiting-approval', title: 'waiting for approval: ' + r.waitingApprovals.join(', ') }, 'approval: ' + r.waitingApprovals.join(', ')) : null,
        ...Object.entries(r.labels || {}).map(([k, v]) => h('span', { class: 'chip label' }, v === true ? k : k + '=' + String(v))),
        r.model ? h('span', {}, r.model) : null,
        r.running ? null : h('span', {}, 'closed'),
        r.archived ? h('span', {}, 'archived') : null,
        h('span', { class: 'row-actions' },
          h('button', { class: 'mini row-flag', title: r.flagged ? 'unflag' : 'flag', onclick: (e: Event) => rowAct(e, r.id, { kind: 'flag', flagged: !r.flagged }) }, r.flagged ? 'Unflag' : 'Flag'),
          h('button', { class: 'mini row-archive', title: r.archived ? 'unarchive' : 'archive', onclick: (e: Event) => rowAct(e, r.id, { kind: 'archive', archived: !r.archived }) }, r.archived ? 'Unarchive' : 'Archive'))),
    );
    el.onclick = () => openSession(r.id);
    return el;
  }

  /** A change from an inbox row (flag, archive): the row does not open; visibility shows it a moment later. */
  async function rowAct(e: Event, id: string, action: Json): Promise<void> {
    e.stopPropagation();
    try {
      await api('/api/sessions/' + encodeURIComponent(id) + '/actions', { method: 'POST', body: action });
    } catch (err) {
      $('inbox-error').textContent = String((err as Error).message);
    }
    drawAtOnce(); // the user's own change shows, under the mouse or not
    setTimeout(loadInbox, 800);
  }

  // ---------- a session ----------
  // The flow runs (page/flows.ts) share the main pane: opening one closes this session's live channel.
  document.addEventListener('fh-select', (e) => {
    if ((e as CustomEvent).detail.kind === 'session') return;
    closeChannel();
    state.selected = null;
    document.querySelectorAll('.row').forEach((r) => r.classList.remove('sel'));
  });
  /** The live text (tools, sub-agents) of the open session: empty when none is open. */
  const live = (): Live => (state.channel ? state.channel.live : emptyLive());
  /** Ends the open session's channel: its stream, its pending refresh, its fetches in flight. */
  function closeChannel(): void {
    const ch = state.channel;
    state.channel = null;
    if (!ch) return;
    ch.abort.abort();
    if (ch.source) ch.source.close();
    if (ch.refreshTimer !== null) clearTimeout(ch.refreshTimer);
  }
  function openSession(id: string): void {
    document.dispatchEvent(new CustomEvent('fh-select', { detail: { kind: 'session', id } }));
    closeChannel();
    const ch: Channel = { id, offset: undefined, live: emptyLive(), source: null, abort: new AbortController(), refreshTimer: null };
    state.channel = ch;
    state.selected = id;
    state.flash = '';
    state.view = null;
    state.tab = 'conversation';
    state.drafts = {};
    document.querySelectorAll('.row').forEach((r) => r.classList.toggle('sel', (r as HTMLElement).dataset.id === id));
    refresh().then(() => {
      if (state.channel !== ch) return;
      const v = state.view;
      state.seen[id] = new Date().toISOString();
      localStorage.setItem('fh-board-seen', JSON.stringify(state.seen));
      document.querySelectorAll('.row[data-id]').forEach((r) => { if ((r as HTMLElement).dataset.id === id) r.querySelector('.dot')!.classList.add('read'); });
      if (v && !v.info.closed) act({ kind: 'read' });
      connect(ch);
    });
  }

  function connect(ch: Channel): void {
    const q = new URLSearchParams({ token: TOKEN });
    if (ch.offset) q.set('from', ch.offset);
    const es = new EventSource('/api/sessions/' + encodeURIComponent(ch.id) + '/events?' + q.toString());
    ch.source = es;
    es.onopen = () => { if (state.channel === ch) $('conn').textContent = 'live'; };
    es.onerror = () => { if (state.channel === ch) $('conn').textContent = 'reconnecting…'; };
    es.addEventListener('fh', (msg) => {
      if (state.channel !== ch) return;
      ch.offset = (msg as MessageEvent).lastEventId || ch.offset;
      onEvent(ch, JSON.parse((msg as MessageEvent).data));
    });
    es.addEventListener('fh-error', (msg) => { if (state.channel === ch) flash('live channel: ' + JSON.parse((msg as MessageEvent).data).message); });
  }

  function onEvent(ch: Channel, e: Json): void {
    const d = e.data || {};
    if (e.subAgent) return onSubAgentEvent(ch, e.subAgent, e.type, d);
    switch (e.type) {
      case 'attempt_started':
        // A model call's (new) attempt: what an earlier attempt streamed is void.
        if (d.kind === 'model') ch.live.text = '';
        return;
      case 'turn_started':
      case 'turn_ended':
        // Kept at once (the refresh follows): a stream read from its start replays finished turns, whose
        // deltas must not show as live text.
        if (state.view) state.view.info.processing = e.type === 'turn_started';
        ch.live = emptyLive();
        renderLive();
        scheduleRefresh(50);
        return;
      case 'text_delta':
        if (state.view && !state.view.info.processing) return;
        ch.live.text += String(d.text ?? '');
        renderLive();
        return;
      case 'thinking_delta':
      case 'tool_input_delta':
      case 'block_started':
      case 'block_stopped':
        return;
      case 'tool_output': {
        const t = ch.live.tools.get(String(d.callId));
        if (!t) return;
        t.output = (t.output || '') + String(d.line) + '\n';
        const shown = inConversation(String(d.callId));
        if (shown) shown.textContent = runningNote(t.output);
        else renderLive();
        return;
      }
      case 'message_end':
        ch.live.text = '';
        scheduleRefresh(50);
        return;
      case 'text':
        ch.live.text += (ch.live.text ? '\n' : '') + String(d.text ?? '');
        renderLive();
        return;
      case 'tool_call':
      case 'tool_started':
        ch.live.tools.set(String(d.id ?? d.callId), { name: d.name, input: d.input, running: true });
        renderLive();
        scheduleRefresh(400);
        return;
      case 'tool_result':
      case 'tool_ended':
        ch.live.tools.delete(String(d.id ?? d.callId));
        scheduleRefresh(100);
        return;
      case 'model_call':
        ch.live.text = '';
        scheduleRefresh(50);
        return;
      default:
        scheduleRefresh(100);
    }
  }

  /**
   * A sub-agent's event: shown live in its own box while the session's turn runs (the session's own
   * conversation never holds the sub-agent's messages, so nothing is refreshed for them).
   */
  function onSubAgentEvent(ch: Channel, origin: Json, type: string, d: Json): void {
    if (state.view && !state.view.info.processing) return;
    const id = String(origin.workflowId);
    let sub = ch.live.subs.get(id);
    if (!sub) {
      sub = { path: Array.isArray(origin.path) ? origin.path.map(String) : [], text: '', tools: new Map(), done: false };
      ch.live.subs.set(id, sub);
    }
    switch (type) {
      case 'attempt_started':
        // A model call's (new) attempt: the box shows the call being made now.
        if (d.kind === 'model') sub.text = '';
        break;
      case 'text_delta':
        sub.text += String(d.text ?? '');
        break;
      case 'text':
        sub.text = String(d.text ?? '');
        break;
      case 'tool_call':
      case 'tool_started':
        sub.tools.set(String(d.id ?? d.callId), { name: d.name, input: d.input });
        break;
      case 'tool_output': {
        const t = sub.tools.get(String(d.callId));
        if (t) t.output = (t.output || '') + String(d.line) + '\n';
        break;
      }
      case 'tool_result':
      case 'tool_ended':
        sub.tools.delete(String(d.id ?? d.callId));
        break;
      case 'turn_started':
        sub.done = false;
        break;
      case 'turn_ended':
        sub.done = true;
        sub.tools.clear();
        break;
      default:
        return;
    }
    renderLive();
  }

  function scheduleRefresh(ms: number): void {
    const ch = state.channel;
    if (!ch) return;
    if (ch.refreshTimer !== null) clearTimeout(ch.refreshTimer);
    ch.refreshTimer = window.setTimeout(() => { ch.refreshTimer = null; if (state.channel === ch) refresh(); }, ms);
  }

  async function refresh(): Promise<void> {
    const ch = state.channel;
    if (!ch) return;
    const id = ch.id;
    try {
      const v = await api('/api/sessions/' + encodeURIComponent(id), { signal: ch.abort.signal });
      if (state.channel !== ch) return;
      state.view = v;
      if (!ch.offset) ch.offset = v.offset;
      if (!v.info.processing) ch.live = emptyLive();
      // Live text the conversation now holds (its model call ended) is shown once, from the conversation.
      if (ch.live.text && lastAssistantText(v.entries).includes(ch.live.text.trim())) ch.live.text = '';
      for (const e of v.entries) if (e.type === 'tool_results') for (const r of e.results) ch.live.tools.delete(r.tool_use_id);
      // The audit view is loaded once when its tab opens; a live refresh only redraws the gauge beside it.
      if (state.tab === 'audit' && document.getElementById('audit')) document.getElementById('gauge')!.replaceWith(side(v));
      else renderSession();
    } catch (err) {
      // A session opened since (this fetch was aborted, or failed late) keeps its own pane.
      if (state.channel !== ch) return;
      $('session').replaceChildren(h('div', { class: 'empty error' }, 'Cannot open ' + id + ': ' + String((err as Error).message)));
    }
  }

  function lastAssistantText(entries: Json[]): string {
    for (let i = entries.length - 1; i >= 0; i--) {
      const e = entries[i];
      if (e.type === 'user') return '';
      if (e.type === 'assistant') return e.content.filter((b: Json) => b.type === 'text').map((b: Json) => b.text).join('\n');
    }
    return '';
  }

  function renderSession(): void {
    const focused = document.activeElement && $('session').contains(document.activeElement) ? document.activeElement.getAttribute('aria-label') : null;
    // Where the caret or the selection was in the focused field: a refresh (every live event makes one) must
    // not move it. Without this, text selected to be replaced was deselected and what was typed next appended.
    const selection = focused ? selectionOf(document.activeElement) : null;
    const v = state.view;
    const info = v.info;
    const s = info.settings || {};
    const title = draft('input', 'title', info.title || '', { placeholder: info.id, 'aria-label': 'title', style: 'font-weight:600; font-size:15px; min-width:280px' });
    const select = (name: string, options: string[], current: string, onchange: (v: string) => void) => {
      const el = h('select', { 'aria-label': name, onchange: (e: Event) => onchange((e.target as HTMLSelectElement).value) },
        ...options.map((o) => { const op = h('option', { value: o }, o) as HTMLOptionElement; op.selected = o === current; return op; }));
      return h('label', {}, name, el);
    };
    const model = draft('input', 'model', s.model || '', { placeholder: 'agent default', 'aria-label': 'model', style: 'width:150px' });
    // The connection is locked at the first message (a fork inherits its original's): then it is shown, not offered.
    const locked = info.messageCount > 0 || !!info.forkedFrom;
    const connection = draft('input', 'connection', s.connection || 'anthropic', { 'aria-label': 'connection', style: 'width:110px', disabled: locked });
    const head = h('div', { class: 'shead' },
      h('div', { class: 'line' }, title,
        h('button', { onclick: () => { clearDraft('title'); act({ kind: 'title', title: title.value }); } }, 'Rename'),
        h('button', { class: info.flagged ? 'on' : '', onclick: () => act({ kind: 'flag', flagged: !info.flagged }) }, info.flagged ? '⚑ Unflag' : '⚐ Flag'),
        h('button', { onclick: () => act({ kind: 'archive', archived: !info.archived }) }, info.archived ? 'Unarchive' : 'Archive'),
        h('span', { class: 'chip s-' + info.status }, info.status),
        info.processing ? h('button', { class: 'danger', id: 'interrupt', onclick: () => act({ kind: 'interrupt' }) }, '■ Interrupt') : null),
      h('div', { class: 'line' },
        select('permission', ['explore', 'ask', 'execute'], s.permissionMode, (m) => act({ kind: 'settings', permissionMode: m })),
        select('thinking', ['off', 'low', 'medium', 'high', 'max'], s.thinking, (t) => act({ kind: 'settings', thinking: t })),
        h('label', {}, 'connection', connection, locked
          ? h('span', { class: 'note', id: 'connection-locked' }, 'locked after the first message')
          : h('button', { onclick: () => connection.value.trim() && (clearDraft('connection'), act({ kind: 'settings', connection: connection.value.trim() })) }, 'Set')),
        h('label', {}, 'model', model, h('button', { onclick: () => model.value.trim() && (clearDraft('model'), act({ kind: 'settings', model: model.value.trim() })) }, 'Set')),
        h('span', { class: 'note' }, info.agent + ' · ' + info.messageCount + (info.messageCount === 1 ? ' message' : ' messages') + (info.readPointer >= v.entries.length - 1 ? ' · all read' : ' · ' + (v.entries.length - 1 - info.readPointer) + ' unread entries') + (info.closed ? ' · closed' : '')),
        h('span', { class: 'flash error' }, state.flash)),
      h('div', { class: 'tabs' },
        h('button', { class: state.tab === 'conversation' ? 'on' : '', onclick: () => { state.tab = 'conversation'; renderSession(); } }, 'Conversation'),
        h('button', { class: state.tab === 'audit' ? 'on' : '', id: 'tab-audit', onclick: () => { state.tab = 'audit'; renderSession(); loadAudit(); } }, 'Audit')),
    );
    const main = h('div', { class: 'main' }, head);
    if (state.tab === 'conversation') {
      main.appendChild(conversation(v));
      const text = draft('textarea', 'compose', '', { placeholder: 'Message this session… (drop files here to attach them)', 'aria-label': 'message' });
      const picker = h('input', { type: 'file', multiple: 'multiple', id: 'attach', 'aria-label': 'attach files', onchange: () => addFiles(picker.files) }) as HTMLInputElement;
      const send = () => {
        if (!text.value.trim()) return;
        act({ kind: 'prompt', text: text.value, ...(state.files.length ? { attachments: state.files } : {}) });
        text.value = '';
        state.files = [];
        clearDraft('compose');
      };
      if (state.files.length) main.appendChild(h('div', { class: 'files', id: 'files' }, ...state.files.map((f, i) => h('span', { class: 'chip file' }, '📎 ' + f.name, h('button', { title: 'remove', onclick: () => { state.files.splice(i, 1); renderSession(); } }, '×')))));
      main.appendChild(h('div', { class: 'compose', id: 'compose', ondragover: (e: DragEvent) => e.preventDefault(), ondrop: (e: DragEvent) => { e.preventDefault(); addFiles(e.dataTransfer && e.dataTransfer.files); } }, text, picker,
        h('button', { class: 'primary', id: 'send', onclick: send }, 'Send')));
    } else {
      main.appendChild(h('div', { class: 'audit', id: 'audit' }, h('div', { class: 'note' }, 'Loading the audit transcript…')));
    }
    $('session').replaceChildren(main, side(v));
    if (focused) {
      const again = $('session').querySelector('[aria-label="' + focused + '"]') as HTMLInputElement | null;
      if (again) {
        again.focus();
        if (selection) selectRange(again, selection);
      }
    }
    const c = document.getElementById('convo');
    if (c) c.scrollTop = c.scrollHeight;
  }

  type Selection = { start: number; end: number; direction: 'forward' | 'backward' | 'none' };
  function selectionOf(el: Element | null): Selection | null {
    if (!(el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement)) return null;
    try {
      return el.selectionStart === null || el.selectionEnd === null ? null : { start: el.selectionStart, end: el.selectionEnd, direction: el.selectionDirection || 'none' };
    } catch {
      return null; // an input type without a selection
    }
  }
  function selectRange(el: HTMLInputElement, at: Selection): void {
    try {
      el.setSelectionRange(at.start, at.end, at.direction);
    } catch {
      // an input type without a selection
    }
  }

  function conversation(v: Json): HTMLElement {
    const box = h('div', { class: 'convo', id: 'convo' });
    const results = new Map<string, Json>();
    for (const e of v.entries) if (e.type === 'tool_results') for (const r of e.results) results.set(r.tool_use_id, r);
    const compactions = v.decisions.filter((d: Json) => d.type === 'compaction');
    let summaries = 0;
    const totalSummaries = v.entries.filter((e: Json) => e.type === 'summary').length;
    // A masking decision names the entries it masked (those before `before`): it is drawn there, unless a
    // compaction since has renumbered the entries; the rest follow the conversation, in time order.
    const lastCompactionAt = compactions.length ? compactions[compactions.length - 1].at : -1;
    const anchored = new Map<number, Json[]>();
    const trailing: Json[] = [];
    for (const d of v.decisions) {
      if (d.type === 'masking' && d.at > lastCompactionAt && d.data.before <= v.entries.length) anchored.set(d.data.before, [...(anchored.get(d.data.before) || []), d]);
      else if (d.type !== 'compaction') trailing.push(d);
    }
    v.entries.forEach((e: Json, i: number) => {
      for (const d of anchored.get(i) || []) box.appendChild(decisionEvent(d));
      if (e.type === 'user') box.appendChild(h('div', { class: 'msg user' }, h('span', { class: 'who' }, 'you'), e.text, ...(e.attachments || []).map((a: Json) => h('span', { class: 'chip file' }, '📎 ' + a.name + ' (' + a.mediaType + (a.masked ? ', masked' : '') + ')'))));
      else if (e.type === 'assistant') {
        for (const b of e.content) {
          if (b.type === 'text') box.appendChild(h('div', { class: 'msg assistant' }, h('span', { class: 'who' }, 'assistant'), b.text));
          else if (b.type === 'thinking') box.appendChild(h('div', { class: 'msg assistant thinking' }, h('span', { class: 'who' }, 'thinking'), b.thinking));
          else if (b.type === 'tool_use') {
            const waiting = v.info.pendingApprovals.some((a: Json) => a.callId === b.id);
            const output = live().tools.get(b.id)?.output;
            box.appendChild(toolBlock(b.name, b.input, results.get(b.id), waiting ? 'waiting for approval' : v.info.processing ? runningNote(output) : 'no result', b.id));
          }
          else if (b.type === 'compaction') box.appendChild(decision('Server-side compaction', '', b.content || '(encrypted)'));
        }
      } else if (e.type === 'summary') {
        // Events are kept for the current run only: the newest compactions match the newest summaries.
        const ev = compactions[compactions.length - (totalSummaries - summaries)];
        summaries++;
        const gate = ev && ev.data.gate ? ' · gate: ' + ev.data.gate.checked + ' facts, ' + ev.data.gate.restated + ' restated' + (ev.data.gate.reasked ? ' (re-asked once)' : '') : '';
        const why = ev ? 'reason: ' + ev.data.reason + ' · ' + ev.data.tokensBefore + ' → ' + ev.data.tokensAfter + ' tokens' + gate : '';
        box.appendChild(decision('Compaction summary (' + e.compactedEntries + ' entries)' + (e.fallback ? ' · fallback' : ''), why, e.summary + (e.injected ? '\n\n' + e.injected : '')));
      }
    });
    for (const d of anchored.get(v.entries.length) || []) box.appendChild(decisionEvent(d));
    for (const d of trailing) box.appendChild(decisionEvent(d));
    for (const a of v.info.pendingApprovals) box.appendChild(a.tool === 'submit_plan' ? planApproval(a) : approval(a));
    const now = live();
    if (now.text || now.tools.size || now.subs.size) box.appendChild(liveBlock()); // as renderLive draws it
    return box;
  }

  function decisionEvent(d: Json): HTMLElement {
    const x = d.data;
    if (d.type === 'masking') return decision('Masked ' + x.masked + ' stale tool results (above this line)', 'saved ' + x.savedTokens + ' tokens (' + x.tokensBefore + ' → ' + x.tokensAfter + ') · ' + ago(d.at), '');
    if (d.type === 'overflow_step') return decision('Overflow ladder: ' + x.step + (x.applied ? ' (applied)' : ' (skipped)'), x.why + ' · ' + x.tokensBefore + ' → ' + x.tokensAfter + ' tokens · ' + ago(d.at), '');
    if (d.type === 'context_edited') return decision('Server context edit' + (x.compacted ? ' and compaction' : ''), 'cleared ' + x.clearedToolUses + ' tool uses, ' + x.clearedInputTokens + ' tokens · ' + ago(d.at), '');
    if (d.type === 'compaction_started') return decision('Compaction started (' + x.reason + ')', x.estimatedTokens + ' of ' + x.contextWindowSize + ' tokens · ' + ago(d.at), '');
    return decision(d.type === 'warning' ? 'Warning: ' + x.code : d.type, String(x.message ?? '') + ' · ' + ago(d.at), '');
  }

  function decision(title: string, why: string, body: string): HTMLElement {
    return h('div', { class: 'decision' }, h('div', { class: 'dt' }, title), why ? h('div', { class: 'note' }, why) : null, body ? h('pre', {}, body) : null);
  }

  const runningNote = (output: string | undefined) => (output ? 'running…\n' + output : 'running…');

  /** A tool call's block; `callId` marks it so live output can reach a call shown in the conversation. */
  function toolBlock(name: string, input: unknown, result: Json | undefined, pending: string, callId?: string): HTMLElement {
    const out = result
      ? h('details', {}, h('summary', {}, (result.is_error ? 'error result' : 'result') + ' · ' + String(result.content).length + ' chars'), h('pre', { class: 'result' }, String(result.content)))
      : h('div', { class: 'note pending' }, pending);
    return h('div', { class: 'tool' + (result && result.is_error ? ' err' : ''), 'data-call': callId }, h('div', { class: 'th' }, '⚙ ' + name), h('pre', { class: 'input' }, asText(input)), out);
  }

  function approval(a: Json): HTMLElement {
    const note = draft('input', 'note:' + a.callId, '', { placeholder: 'note (optional)', 'aria-label': 'note' });
    return h('div', { class: 'approval', 'data-call': a.callId },
      h('div', {}, h('b', {}, 'Approval needed: '), a.tool, h('span', { class: 'note' }, '  · asked ' + ago(a.requestedAt))),
      h('pre', {}, asText(a.input)),
      h('div', { class: 'btns' }, note,
        h('button', { class: 'primary approve', onclick: () => act({ kind: 'approve', callId: a.callId, ...(note.value ? { note: note.value } : {}) }) }, 'Approve'),
        h('button', { class: 'danger deny', onclick: () => act({ kind: 'deny', callId: a.callId, ...(note.value ? { note: note.value } : {}) }) }, 'Deny')));
  }

  /**
   * A plan waiting for a decision (explore mode's submit_plan): its Markdown drawn by markdownBlock (text
   * nodes only), a mode to switch to, a note, Approve / Decline.
   */
  function planApproval(a: Json): HTMLElement {
    const note = draft('input', 'note:' + a.callId, '', { placeholder: 'note (optional)', 'aria-label': 'note' });
    const modeKey = 'mode:' + a.callId;
    const mode = h('select', { 'aria-label': 'plan mode' }, ...[['', 'stay in explore'], ['ask', 'switch to ask'], ['execute', 'switch to execute']].map(([v, t]) => h('option', { value: v }, t))) as HTMLSelectElement;
    mode.value = state.drafts[modeKey] || '';
    mode.onchange = () => { state.drafts[modeKey] = mode.value; };
    const withNote = (x: Json) => (note.value ? { ...x, note: note.value } : x);
    return h('div', { class: 'approval plan', 'data-plan': a.callId },
      h('div', {}, h('b', {}, 'Plan to approve'), h('span', { class: 'note' }, '  · submitted ' + ago(a.requestedAt))),
      markdownBlock(a.input && typeof a.input.plan === 'string' ? a.input.plan : asText(a.input)),
      h('div', { class: 'btns' }, note, mode,
        h('button', { class: 'primary approve-plan', onclick: () => act(withNote({ kind: 'approve-plan', planId: a.callId, ...(mode.value ? { mode: mode.value } : {}) })) }, 'Approve'),
        h('button', { class: 'danger decline-plan', onclick: () => act(withNote({ kind: 'decline-plan', planId: a.callId })) }, 'Decline')));
  }

  /**
   * A safe subset of Markdown (headings, lists, code fences, paragraphs; `code` and **bold** inline), built
   * from elements and text nodes: the model's text never becomes markup, and links stay text.
   */
  function markdownBlock(md: string): HTMLElement {
    const box = h('div', { class: 'md' });
    let list: HTMLElement | null = null;
    let code: string[] | null = null;
    const inline = (t: string) => t.split(/(`[^`]+`|\*\*[^*]+\*\*)/).filter(Boolean).map((part) =>
      part.startsWith('`') && part.endsWith('`') && part.length > 1 ? h('code', {}, part.slice(1, -1)) : part.startsWith('**') && part.endsWith('**') && part.length > 4 ? h('strong', {}, part.slice(2, -2)) : part);
    for (const line of md.split(/\r?\n/)) {
      if (code) {
        if (/^\s*```/.test(line)) { box.appendChild(h('pre', {}, code.join('\n'))); code = null; } else code.push(line);
        continue;
      }
      const head = /^(#{1,6})\s+(.*)$/.exec(line);
      const item = /^\s*([-*+]|\d+[.)])\s+(.*)$/.exec(line);
      if (/^\s*```/.test(line)) { code = []; list = null; }
      else if (head) { list = null; box.appendChild(h('h' + Math.min(6, head[1].length + 2), {}, ...inline(head[2]))); }
      else if (item) {
        const ordered = /\d/.test(item[1]);
        if (!list || (list.tagName === 'OL') !== ordered) box.appendChild((list = h(ordered ? 'ol' : 'ul')));
        list.appendChild(h('li', {}, ...inline(item[2])));
      } else if (!line.trim()) list = null;
      else { list = null; box.appendChild(h('p', {}, ...inline(line))); }
    }
    if (code) box.appendChild(h('pre', {}, code.join('\n')));
    return box;
  }

  function liveBlock(): HTMLElement {
    const box = h('div', { id: 'live' });
    const now = live();
    // A call the conversation already shows (the model's reply is in it) is not drawn twice.
    for (const [id, t] of now.tools) if (!inConversation(id)) box.appendChild(toolBlock(t.name, t.input, undefined, runningNote(t.output)));
    for (const [id, sub] of now.subs) box.appendChild(subAgentBlock(id, sub));
    if (now.text) box.appendChild(h('div', { class: 'msg assistant live', id: 'live-text' }, h('span', { class: 'who' }, 'assistant · live'), now.text));
    return box;
  }

  /** The pending note of a call the conversation shows, if it does. */
  function inConversation(callId: string): HTMLElement | null {
    const convo = document.getElementById('convo');
    if (!convo) return null;
    for (const el of convo.querySelectorAll<HTMLElement>('.tool[data-call]')) if (el.dataset.call === callId && !el.closest('#live')) return el.querySelector<HTMLElement>('.pending');
    return null;
  }

  /** A sub-agent's box, indented by its depth under the session; its text is model output, shown as text. */
  function subAgentBlock(id: string, sub: SubLive): HTMLElement {
    const box = h('div', { class: 'subagent' + (sub.done ? ' done' : ''), 'data-workflow': id, style: 'margin-left:' + 16 * Math.max(0, sub.path.length - 1) + 'px' },
      h('div', { class: 'who' }, 'sub-agent ' + sub.path.join(' › ') + (sub.done ? ' · done' : ' · working')));
    for (const [, t] of sub.tools) box.appendChild(toolBlock(t.name, t.input, undefined, runningNote(t.output)));
    if (sub.text) box.appendChild(h('div', { class: 'msg assistant live sub-text' }, sub.text));
    return box;
  }

  function renderLive(): void {
    const convo = document.getElementById('convo');
    if (!convo) return;
    const old = document.getElementById('live');
    const now = live();
    if (!now.text && !now.tools.size && !now.subs.size) {
      if (old) old.remove();
      return;
    }
    const fresh = liveBlock();
    if (old) old.replaceWith(fresh);
    else convo.appendChild(fresh);
    convo.scrollTop = convo.scrollHeight;
  }

  function side(v: Json): HTMLElement {
    const g = v.gauge;
    const box = h('aside', { class: 'side', id: 'gauge' });
    if (!g) {
      box.appendChild(h('div', { class: 'note' }, 'No context budget yet (the conversation is loading or has not started).'));
      return box;
    }
    const w = g.contextWindowTokens || 1;
    const bar = h('div', { class: 'bar', title: g.usedTokens + ' of ' + w + ' tokens' });
    for (const l of g.layers) if (l.tokens > 0) bar.appendChild(h('span', { class: 'seg-' + l.key, style: 'width:' + (100 * l.tokens / w).toFixed(2) + '%', title: l.label + ': ' + l.tokens }));
    bar.appendChild(h('span', { style: 'flex:1' }));
    bar.appendChild(h('span', { class: 'seg-reserve', style: 'width:' + (100 * g.reserveTokens / w).toFixed(2) + '%', title: 'reserve: ' + g.reserveTokens }));
    if (g.thresholdTokens) bar.appendChild(h('span', { class: 'thr', style: 'left:' + Math.min(100, 100 * g.thresholdTokens / w).toFixed(2) + '%', title: 'compaction threshold: ' + g.thresholdTokens }));
    const rows = h('tbody', {});
    for (const l of g.layers) rows.appendChild(h('tr', { 'data-layer': l.key }, h('td', {}, h('span', { class: 'sw seg-' + l.key }), l.label), h('td', { class: 'n' }, fmt(l.tokens))));
    rows.appendChild(h('tr', { 'data-layer': 'reserve' }, h('td', {}, h('span', { class: 'sw seg-reserve' }), 'Reserve (reply)'), h('td', { class: 'n' }, fmt(g.reserveTokens))));
    if (g.thresholdTokens) rows.appendChild(h('tr', { 'data-layer': 'threshold' }, h('td', {}, h('span', { class: 'sw', style: 'background:#1d2330' }), 'Compaction threshold'), h('td', { class: 'n' }, fmt(g.thresholdTokens))));
    box.append(
      h('div', {}, h('h3', {}, 'Context'),
        h('div', { class: 'note', style: 'margin-bottom:6px' }, fmt(g.usedTokens) + ' / ' + fmt(w) + ' tokens (' + g.usagePercent + '%) · history at ' + g.historyPercentOfAvailable + '% of its room'),
        bar, h('table', { class: 'layers' }, rows)),
    );
    if (g.historyPercentOfAvailable > g.hintPercent) box.appendChild(h('div', { class: 'hint', id: 'hint' }, '▲ Past ' + g.hintPercent + '%: consider compacting. ' + (g.hint || '')));
    if (g.usage) {
      const u = g.usage;
      box.appendChild(h('div', {}, h('h3', {}, 'Usage'), h('dl', { class: 'kv' },
        h('dt', {}, 'model calls'), h('dd', {}, String(u.modelCalls)),
        h('dt', {}, 'cost'), h('dd', { id: 'cost' }, String(u.cost)),
        h('dt', {}, 'input tokens'), h('dd', {}, fmt(u.inputTokens)),
        h('dt', {}, 'output tokens'), h('dd', {}, fmt(u.outputTokens)),
        h('dt', {}, 'cache read / write'), h('dd', {}, fmt(u.cacheReadTokens) + ' / ' + fmt(u.cacheWriteTokens)),
        h('dt', {}, 'cache hit rate'), h('dd', { id: 'cache-hit' }, u.cacheHitRate + '%'))));
    }
    const q = v.info.queued || [];
    if (q.length) box.appendChild(h('div', {}, h('h3', {}, 'Queued'), ...q.map((m: Json) => h('div', { class: 'note' }, m.text))));
    return box;
  }

  async function loadAudit(): Promise<void> {
    const id = state.selected!;
    const verdict = h('div', { class: 'note', id: 'verdict' }, 'Replay check: not run.');
    const run = h('button', { id: 'replay', onclick: async () => {
      verdict.className = 'note';
      verdict.textContent = 'Replaying the history against the current code…';
      try {
        const r = await api('/api/sessions/' + encodeURIComponent(id) + '/replay', { method: 'POST', body: {} });
        verdict.className = 'verdict ' + (r.ok ? 'ok' : 'bad');
        verdict.textContent = r.verdict;
      } catch (err) {
        verdict.className = 'verdict bad';
        verdict.textContent = String((err as Error).message);
      }
    } }, 'Run replay check');
    try {
      const a = await api('/api/sessions/' + encodeURIComponent(id) + '/audit');
      const root = document.getElementById('audit');
      if (!root || state.selected !== id) return;
      root.replaceChildren(h('div', { class: 'line' }, run, ' ', verdict), h('pre', { id: 'audit-md' }, a.markdown));
    } catch (err) {
      const root = document.getElementById('audit');
      if (root) root.replaceChildren(h('div', { class: 'error' }, String((err as Error).message)));
    }
  }

  loadInbox();
  setInterval(loadInbox, 5000);
}
