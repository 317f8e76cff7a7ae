// Overview: health, version, uptime, rates from /metrics, executions by status, token usage,
// webhooks with failing deliveries and the dead-letter queue. Refreshed every 5 s while shown.
import { api, get, parseMetrics, metricSum } from './api.js';
import { h, clear, errorBox, table, badge, short, duration, when, setTitle } from './dom.js';
import { may, needs } from './caller.js';

const STATUSES = ['pending', 'running', 'paused', 'completed', 'failed', 'cancelled'];
const PAGE = 1000;

const stat = (label, value, id) => h('div', { class: 'stat', id }, h('div', { class: 'label' }, label), h('div', { class: 'value' }, value));

async function count(path) {
  const data = await get(path);
  const n = (data.items || []).length;
  return n >= PAGE && data.next_cursor ? `${n}+` : String(n);
}

export function render(view) {
  setTitle('Overview');
  const health = h('div', { class: 'grid', 'aria-live': 'polite' });
  const rates = h('div', { class: 'grid' });
  const byStatus = h('div', { class: 'grid' });
  const hooks = h('div', { class: 'table-wrap' });
  const dlq = h('div', { class: 'table-wrap' });
  view.append(h('h1', {}, 'Overview'), health, h('h2', {}, 'Rates'), rates, h('h2', {}, 'Executions by status'), byStatus,
    h('h2', {}, 'Webhooks'), hooks, h('h2', {}, 'Dead letters'), dlq);
  let previous = null; // {at, requests, events}
  let stopped = false;

  async function refresh() {
    try {
      const hl = await get('/health');
      clear(health, stat('Health', h('span', { class: 'ok' }, hl.status), 'health'), stat('Version', hl.version),
        stat('Uptime', duration(hl.uptime_seconds * 1000)));
    } catch (e) { clear(health, errorBox(e)); }
    await loadRates();
    try {
      const counts = await Promise.all(STATUSES.map((s) => count(`/executions?status=${s}&limit=${PAGE}`)));
      const recent = await get('/executions?kind=agent&limit=200');
      const tokens = (recent.items || []).reduce((a, x) => a + ((x.token_usage && x.token_usage.total) || 0), 0);
      clear(byStatus, STATUSES.map((s, i) => stat(s, counts[i], `count-${s}`)),
        stat('Tokens (last 200 agent runs)', String(tokens)));
    } catch (e) { clear(byStatus, errorBox(e)); }
    await loadHooks();
  }
  // Rates from two readings of /metrics (admins only).
  async function loadRates() {
    if (!may('admin')) {
      clear(rates, h('p', { class: 'muted', id: 'rates-denied' }, needs('admin', 'read the metrics')));
      return;
    }
    try {
      const res = await api('GET', '/metrics');
      const m = parseMetrics(res.data);
      const now = performance.now();
      const cur = { at: now, requests: metricSum(m, 'cairn_http_requests_total'), events: metricSum(m, 'cairn_bus_last_seq'),
        runs: metricSum(m, 'cairn_executor_runs_total') };
      const rate = (k) => (previous ? ((cur[k] - previous[k]) * 1000 / (now - previous.at)).toFixed(1) : '…');
      clear(rates, stat('Requests/s', rate('requests'), 'rate-requests'), stat('Events/s', rate('events'), 'rate-events'),
        stat('Executor runs/s', rate('runs')), stat('Open connections', String(metricSum(m, 'cairn_http_open_connections'))),
        stat('Records', String(metricSum(m, 'cairn_store_records') || metricSum(m, 'cairn_records'))),
        stat('Events (last seq)', String(cur.events)));
      previous = cur;
    } catch (e) { clear(rates, errorBox(e)); }
  }
  // Webhooks with their dead-letter counts, and the dead-letter queue (developers and up).
  async function loadHooks() {
    if (!may('developer')) {
      clear(hooks, h('p', { class: 'muted', id: 'hooks-denied' }, needs('developer', 'see webhooks and dead letters')));
      clear(dlq);
      return;
    }
    try {
      const [wh, dl] = await Promise.all([get('/webhooks'), get('/dlq?limit=1000')]);
      const failing = new Map();
      for (const d of dl.items || []) failing.set(d.webhook_id, (failing.get(d.webhook_id) || 0) + 1);
      clear(hooks, table(['Webhook', 'URL', 'Active', 'Dead letters'], wh.items || [], (w) => [short(w.id), w.url,
        w.active ? 'yes' : 'no', failing.get(w.id) ? h('span', { class: 'error' }, String(failing.get(w.id))) : '0']));
      clear(dlq, table(['Dead letter', 'Webhook', 'Event', 'Attempts', 'Last status', 'Last error', 'Updated'], dl.items || [],
        (d) => [short(d.id), short(d.webhook_id), String(d.event_seq), String(d.attempts), d.last_status === null ? '—' : String(d.last_status),
          d.last_error || '', when(d.updated_at)]));
    } catch (e) { clear(hooks, errorBox(e)); }
  }
  const timer = setInterval(() => { if (!stopped) refresh(); }, 5000);
  refresh();
  return () => { stopped = true; clearInterval(timer); };
}
