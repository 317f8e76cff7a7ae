// Executions (docs/executions.md): the list with filters, and one execution: its tree of child runs
// on a timeline, the agent's conversation, its snapshots with the difference between steps, and
// cancel / resume. The tree and the conversation routes may be missing on older servers: the page
// then shows what it can (direct children; the conversation from the newest snapshot).
import { api, get, qs, ApiError } from './api.js';
import { h, clear, errorBox, pagedTable, badge, short, when, runDuration, link, field, pretty, setTitle } from './dom.js';
import { diffView } from './diff.js';
import { may } from './caller.js';

const ACTIVE = new Set(['pending', 'running', 'paused']);

export function render(view, [id], params) {
  return id ? renderOne(view, id) : renderList(view, params);
}

function renderList(view, params) {
  setTitle('Executions');
  const kind = h('select', { id: 'exec-kind' }, ['', 'agent', 'tool', 'workflow'].map((k) => h('option', { value: k }, k || 'any')));
  const status = h('select', { id: 'exec-status' }, ['', 'pending', 'running', 'paused', 'completed', 'failed', 'cancelled'].map((k) => h('option', { value: k }, k || 'any')));
  const executor = h('input', { id: 'exec-executor', size: 14 });
  const session = h('input', { id: 'exec-session', size: 20 });
  kind.value = params.get('kind') || '';
  status.value = params.get('status') || '';
  executor.value = params.get('executor') || '';
  session.value = params.get('session_id') || '';
  const paged = pagedTable(['Execution', 'Kind', 'Executor', 'Status', 'Session', 'Started', 'Duration', 'Tokens'], (x) => [
    link(`executions/${encodeURIComponent(x.id)}`, short(x.id)), x.kind, x.executor, badge(x.status),
    x.session_id ? link(`sessions/${encodeURIComponent(x.session_id)}`, short(x.session_id)) : '',
    when(x.started_at || x.created_at), runDuration(x), String((x.token_usage && x.token_usage.total) || 0)], 'Executions, newest first',
  (cursor) => get(`/executions${qs({ kind: kind.value, status: status.value, executor: executor.value.trim(),
    session_id: session.value.trim(), limit: 50, cursor })}`));
  const load = paged.load;
  view.append(h('h1', {}, 'Executions'),
    h('form', { class: 'inline', 'aria-label': 'Filter executions', onsubmit: (e) => { e.preventDefault(); load(false); } },
      field('Kind', kind), field('Status', status), field('Executor', executor), field('Session', session),
      h('button', { type: 'submit' }, 'Filter')),
    paged.node);
  load(false);
}

// The tree as rows [{node, depth}], depth first, children in order.
function flatten(node, depth = 0, out = []) {
  out.push({ node, depth });
  for (const c of node.children || []) flatten(c, depth + 1, out);
  return out;
}

function timeline(root) {
  const rows = flatten(root);
  const t = (s) => (s ? Date.parse(s) : NaN);
  const now = Date.now();
  const starts = rows.map((r) => t(r.node.started_at || r.node.created_at)).filter((x) => !Number.isNaN(x));
  const ends = rows.map((r) => t(r.node.completed_at) || now).filter((x) => !Number.isNaN(x));
  const t0 = Math.min(...starts);
  const span = Math.max(1, Math.max(...ends) - t0);
  return h('ul', { class: 'tree', id: 'exec-tree', 'aria-label': 'Execution tree' }, rows.map(({ node, depth }) => {
    const s = t(node.started_at || node.created_at);
    const e = t(node.completed_at) || now;
    const left = Number.isNaN(s) ? 0 : ((s - t0) * 100) / span;
    const width = Number.isNaN(s) ? 0 : Math.max(0.5, ((e - s) * 100) / span);
    const tokens = node.token_usage && node.token_usage.total ? ` · ${node.token_usage.total} tok` : '';
    const label = `${node.kind} ${node.executor || ''} ${node.status} ${runDuration(node)}${tokens}`;
    const bar = h('span', { class: `bar s-${node.status}`, title: label });
    bar.style.left = `${left}%`;
    bar.style.width = `${Math.min(width, 100 - left)}%`;
    const name = h('span', { class: 'name' }, '\u00a0\u00a0'.repeat(depth), depth ? '└ ' : '',
      link(`executions/${encodeURIComponent(node.id)}`, `${node.kind || ''} ${node.executor || short(node.id)}`), ' ', badge(node.status),
      ` ${runDuration(node)}${tokens}`, node.error ? h('span', { class: 'error' }, ` ${node.error.code}`) : null);
    return h('li', {}, name, h('span', { class: 'track', role: 'img', 'aria-label': label }, bar));
  }));
}

// Chat-completion style messages → a readable list.
function conversation(messages) {
  if (!messages || !messages.length) return h('p', { class: 'muted' }, 'no conversation recorded');
  return h('ol', { class: 'conversation' }, messages.map((m) => h('li', {},
    h('strong', {}, m.role || '?'), m.name ? ` (${m.name})` : '', ': ',
    typeof m.content === 'string' ? m.content : m.content === null || m.content === undefined ? '' : pretty(m.content),
    (m.tool_calls || []).map((c) => h('div', { class: 'inline-run' }, '→ ', h('code', {}, (c.function && c.function.name) || c.name || ''), ' ',
      h('code', {}, typeof (c.function && c.function.arguments) === 'string' ? c.function.arguments : JSON.stringify(c.arguments ?? (c.function && c.function.arguments) ?? {})))))));
}

const stateOf = (snap) => {
  const s = snap && snap.state_json;
  if (typeof s !== 'string') return s || {};
  try { return JSON.parse(s); } catch { return s; }
};

function renderOne(view, id) {
  setTitle(`Execution ${short(id)}`);
  const head = h('div', { class: 'panel', id: 'exec-head' }, 'loading…');
  const actions = h('div', { class: 'toolbar' });
  const tree = h('div', { class: 'panel' });
  const talk = h('div', { class: 'panel', id: 'exec-conversation' });
  const snaps = h('div', { class: 'panel', id: 'exec-snapshots' });
  const io = h('div', { class: 'split' });
  view.append(h('h1', {}, `Execution ${short(id)}`), head, actions, h('h2', {}, 'Tree'), tree, io,
    h('h2', {}, 'Conversation'), talk, h('h2', {}, 'Snapshots'), snaps);
  let timer = null;
  let lastStatus = '';

  async function act(what) {
    try { await api('POST', `/executions/${encodeURIComponent(id)}/${what}`); } catch (e) { actions.append(errorBox(e)); }
    load();
  }
  async function loadTree(x) {
    try {
      clear(tree, timeline(await get(`/executions/${encodeURIComponent(id)}/tree`)));
    } catch (e) {
      if (!(e instanceof ApiError) || e.status !== 404) return clear(tree, errorBox(e));
      try { // no tree route: the direct children
        const kids = await get(`/executions${qs({ parent: id, limit: 200 })}`);
        clear(tree, timeline({ ...x, children: (kids.items || []).reverse() }), h('p', { class: 'muted' }, 'direct children only (this server has no tree route)'));
      } catch (e2) { clear(tree, errorBox(e2)); }
    }
  }
  async function loadConversation(x) {
    try {
      const r = await get(`/executions/${encodeURIComponent(id)}/messages`);
      return clear(talk, conversation(r.items || r.messages || []));
    } catch (e) {
      if (!(e instanceof ApiError) || e.status !== 404) return clear(talk, errorBox(e));
    }
    if (!x.last_snapshot_id) return clear(talk, h('p', { class: 'muted' }, x.kind === 'agent' ? 'no snapshot yet' : 'not an agent run'));
    try {
      const snap = await get(`/snapshots/${encodeURIComponent(x.last_snapshot_id)}`);
      clear(talk, conversation(stateOf(snap).messages), h('p', { class: 'muted' }, 'from the newest snapshot'));
    } catch (e) { clear(talk, errorBox(e)); }
  }
  async function loadSnapshots() {
    try {
      const r = await get(`/executions/${encodeURIComponent(id)}/snapshots?limit=100`);
      const items = (r.items || []).slice().reverse(); // oldest first
      const detail = h('div');
      async function showSnap(i) {
        try {
          const cur = await get(`/snapshots/${encodeURIComponent(items[i].id)}`);
          const prev = i > 0 ? await get(`/snapshots/${encodeURIComponent(items[i - 1].id)}`) : null;
          clear(detail, h('h3', {}, `Step ${cur.step_number}${cur.is_final ? ' (final)' : ''}`, prev ? ` compared with step ${prev.step_number}` : ''),
            diffView(prev ? pretty(stateOf(prev)) : '', pretty(stateOf(cur)), 'snapshot difference'));
        } catch (e) { clear(detail, errorBox(e)); }
      }
      clear(snaps, items.length ? h('div', { class: 'toolbar' }, items.map((s, i) => h('button', { type: 'button', class: 'secondary', onclick: () => showSnap(i) },
        `step ${s.step_number}${s.is_final ? ' final' : ''}`))) : h('p', { class: 'muted' }, 'no snapshots'), detail);
    } catch (e) { clear(snaps, errorBox(e)); }
  }
  async function load() {
    let x;
    try { x = await get(`/executions/${encodeURIComponent(id)}`); } catch (e) { return clear(head, errorBox(e)); }
    clear(head, h('dl', { class: 'grid' },
      [['Status', h('span', { id: 'exec-status-value' }, badge(x.status))], ['Kind', x.kind], ['Executor', x.executor],
        ['Session', x.session_id ? link(`sessions/${encodeURIComponent(x.session_id)}`, short(x.session_id)) : '—'],
        ['Parent', x.parent_execution_id ? link(`executions/${encodeURIComponent(x.parent_execution_id)}`, short(x.parent_execution_id)) : '—'],
        ['Root', x.root_execution_id && x.root_execution_id !== x.id ? link(`executions/${encodeURIComponent(x.root_execution_id)}`, short(x.root_execution_id)) : '—'],
        ['Started', when(x.started_at || x.created_at)], ['Duration', runDuration(x)], ['Steps', String(x.step_count ?? 0)],
        ['Tokens', String((x.token_usage && x.token_usage.total) || 0)]].map(([k, v]) => h('div', { class: 'stat' }, h('dt', { class: 'label' }, k), h('dd', { class: 'value' }, v)))),
    x.error ? errorBox({ message: `${x.error.code}: ${x.error.message}` }) : null);
    clear(actions, !may('user') ? null : [
      ACTIVE.has(x.status) ? h('button', { type: 'button', class: 'danger', id: 'exec-cancel', onclick: () => act('cancel') }, 'Cancel') : null,
      x.status === 'paused' ? h('button', { type: 'button', id: 'exec-resume', onclick: () => act('resume') }, 'Resume') : null]);
    clear(io, h('div', {}, h('h2', {}, 'Input'), h('pre', { tabindex: '0' }, pretty(x.input ?? null))),
      h('div', {}, h('h2', {}, 'Output'), h('pre', { tabindex: '0' }, pretty(x.output ?? null))));
    if (x.status !== lastStatus) { // the tree, conversation and snapshots change when the status does
      lastStatus = x.status;
      loadTree(x);
      loadConversation(x);
      loadSnapshots();
    } else if (ACTIVE.has(x.status)) loadTree(x);
    clearTimeout(timer);
    if (ACTIVE.has(x.status)) timer = setTimeout(load, 1500);
  }
  load();
  return () => clearTimeout(timer);
}
