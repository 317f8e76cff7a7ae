// Events: a live tail of GET /events/stream with a selector and a `when` condition. Bounded (the
// newest MAX events are kept) and virtualised (only the rows in view exist in the DOM, redrawn at
// most once a frame), so thousands of events a second do not freeze the page. Pausing freezes the
// view; events keep arriving and are counted.
import { qs, stream, apiKey } from './api.js';
import { h, clear, field, pretty, setTitle, errorBox } from './dom.js';

const MAX = 10000;
const ROW = 22; // px, as .tail .row in style.css

export function render(view, _args, params) {
  setTitle('Events');
  const f = {
    schema_name: h('input', { id: 'tail-schema', size: 16 }),
    any_tags: h('input', { id: 'tail-tags', size: 16, placeholder: 'a,b' }),
    path: h('input', { id: 'tail-path', size: 14, placeholder: 'tools/**' }),
    types: h('input', { id: 'tail-types', size: 22, placeholder: 'breadcrumb.created,agent.token' }),
    when: h('input', { id: 'tail-when', size: 26, placeholder: "event.type == 'breadcrumb.created'" }),
    since: h('input', { id: 'tail-since', size: 6, inputmode: 'numeric', placeholder: 'seq' }),
  };
  for (const [k, input] of Object.entries(f)) input.value = params.get(k) || '';
  const startBtn = h('button', { type: 'submit', id: 'tail-start' }, 'Start');
  const pauseBtn = h('button', { type: 'button', id: 'tail-pause', class: 'secondary', disabled: true, 'aria-pressed': 'false' }, 'Pause');
  const clearBtn = h('button', { type: 'button', class: 'secondary' }, 'Clear');
  const stats = h('p', { class: 'tail-stats', id: 'tail-stats', 'aria-live': 'off' }, 'not started');
  const status = h('div', { role: 'status' });
  const spacer = h('div', { class: 'spacer' });
  const box = h('div', { class: 'tail', id: 'tail', tabindex: '0', role: 'list', 'aria-label': 'Events, oldest first' }, spacer);
  const detail = h('pre', { id: 'tail-detail', tabindex: '0', 'aria-label': 'Selected event' }, 'select an event to see it whole');
  view.append(h('h1', {}, 'Events'),
    h('form', {
      class: 'inline panel', 'aria-label': 'Event selector', onsubmit: (e) => { e.preventDefault(); start(); },
    }, field('Schema', f.schema_name), field('Any tags', f.any_tags), field('Path', f.path), field('Types', f.types),
    field('When (CEL)', f.when), field('From seq', f.since), startBtn, pauseBtn, clearBtn),
    status, stats, box, h('h2', {}, 'Event'), detail);

  let buf = []; // ring: the newest MAX events {line, data}
  let head = 0; // index of the oldest in buf once it is full
  let received = 0;
  let paused = false;
  let es = null;
  let dirty = false;
  let follow = true;
  const pool = [];
  const rate = { at: performance.now(), n: 0, perSecond: 0 };
  // Read by the browser tests and the figure in docs/performance.md.
  const probe = { received: 0, drawn: 0, maxRows: 0, lastSeq: 0, repeated: 0, unsequenced: [] };
  window.cairnTail = probe;

  const size = () => buf.length;
  const at = (i) => buf[(head + i) % buf.length];

  function line(d) {
    const bits = [d.seq !== undefined ? `#${d.seq}` : '', d.type || '', d.schema_name || '', d.path || d.breadcrumb_id || '',
      d.title ? `“${d.title}”` : '', d.delta !== undefined ? JSON.stringify(d.delta) : ''];
    return bits.filter(Boolean).join('  ');
  }
  function push(data) {
    const item = { line: line(data), data };
    if (buf.length < MAX) buf.push(item);
    else { buf[head] = item; head = (head + 1) % MAX; }
    received++;
    probe.received = received;
    if (data.seq !== undefined) {
      if (data.seq <= probe.lastSeq) probe.repeated++; // never expected: a stream delivers each seq once, in order
      probe.lastSeq = data.seq;
    } else if (probe.unsequenced.length < 20) probe.unsequenced.push(data.type);
    if (data.type === 'stream.dropped') clear(status, errorBox({ message: `the server dropped the stream: ${data.reason}; reconnecting` }));
    rate.n++;
    if (!dirty && !paused) { dirty = true; requestAnimationFrame(draw); }
  }
  function draw() {
    dirty = false;
    const n = size();
    spacer.style.height = `${n * ROW}px`;
    if (follow) box.scrollTop = n * ROW;
    const first = Math.max(0, Math.floor(box.scrollTop / ROW) - 2);
    const count = Math.min(n - first, Math.ceil(box.clientHeight / ROW) + 4);
    while (pool.length < count) {
      const row = h('div', { class: 'row', role: 'listitem', tabindex: '-1' });
      row.addEventListener('click', () => select(row));
      row.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); select(row); } });
      pool.push(row);
      spacer.append(row);
    }
    for (let i = 0; i < pool.length; i++) {
      const row = pool[i];
      if (i >= count) { row.hidden = true; continue; }
      const item = at(first + i);
      row.hidden = false;
      row.style.top = `${(first + i) * ROW}px`;
      row.dataset.index = String(first + i);
      row.textContent = item.line;
      row.tabIndex = i === 0 ? 0 : -1;
    }
    showStats();
    probe.drawn++;
    probe.maxRows = Math.max(probe.maxRows, spacer.childElementCount);
  }
  function select(row) {
    const item = at(Number(row.dataset.index));
    if (item) detail.textContent = pretty(item.data);
  }
  box.addEventListener('scroll', () => {
    follow = box.scrollTop + box.clientHeight >= box.scrollHeight - ROW;
    if (!dirty) { dirty = true; requestAnimationFrame(draw); }
  });
  box.addEventListener('keydown', (e) => { // arrow keys move between rows
    const rows = pool.filter((r) => !r.hidden);
    const i = rows.indexOf(document.activeElement);
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      const next = rows[Math.max(0, Math.min(rows.length - 1, i + (e.key === 'ArrowDown' ? 1 : -1)))];
      if (next) next.focus();
    }
  });
  function showStats() {
    stats.textContent = `${received} events received · ${rate.perSecond.toFixed(0)}/s · showing the newest ${size()} (at most ${MAX})${paused ? ' · paused' : ''}`;
  }
  const ticker = setInterval(() => {
    const now = performance.now();
    rate.perSecond = (rate.n * 1000) / (now - rate.at);
    rate.at = now;
    rate.n = 0;
    showStats();
  }, 1000);

  function stop() {
    if (es) es.close();
    es = null;
  }
  function start() {
    stop();
    clear(status);
    const params = {
      schema_name: f.schema_name.value.trim(), any_tags: f.any_tags.value.trim(), path: f.path.value.trim(),
      types: f.types.value.trim(), when: f.when.value.trim(), since: f.since.value.trim(),
    };
    const path = `/events/stream${qs(params)}`;
    es = stream(path);
    startBtn.textContent = 'Restart';
    pauseBtn.disabled = false;
    es.onopen = () => clear(status, h('span', { class: 'ok' }, 'following ', path));
    es.onmessage = (m) => {
      let d;
      try { d = JSON.parse(m.data); } catch { return; }
      if (d.type !== 'ping') push(d); // keep-alive frames are not events
    };
    es.onerror = async () => {
      // EventSource hides the status of a refused stream: ask once with fetch to show the 400.
      if (es && es.readyState === EventSource.CLOSED) {
        stop();
        try {
          const headers = { Accept: 'application/json' };
          if (apiKey()) headers.Authorization = `Bearer ${apiKey()}`;
          const r = await fetch(path, { headers });
          const body = await r.json().catch(() => ({}));
          clear(status, errorBox({ status: r.status, code: body.error && body.error.code, message: (body.error && body.error.message) || 'the stream closed', field: body.error && body.error.field }));
        } catch (e) { clear(status, errorBox(e)); }
      } else clear(status, h('span', { class: 'muted' }, 'reconnecting…'));
    };
  }
  pauseBtn.addEventListener('click', () => {
    paused = !paused;
    pauseBtn.textContent = paused ? 'Resume' : 'Pause';
    pauseBtn.setAttribute('aria-pressed', String(paused));
    if (!paused) { dirty = true; requestAnimationFrame(draw); }
  });
  clearBtn.addEventListener('click', () => { buf = []; head = 0; draw(); });
  return () => { stop(); clearInterval(ticker); };
}
