// Records: browse and search breadcrumbs; one record with its history as diffs; edit with If-Match
// (a 412 shows the conflict: someone else changed it first).
import { api, get, qs } from './api.js';
import { h, clear, errorBox, pagedTable, short, when, link, field, pretty, setTitle } from './dom.js';
import { diffView } from './diff.js';
import { may, needs } from './caller.js';

// Definitions are written by developers (docs/auth.md); other records by users.
const DEFINITIONS = new Set(['tool.v1', 'agent.def.v1', 'workflow.def.v1']);

export function render(view, [id], params) {
  return id ? renderOne(view, id) : renderList(view, params);
}

function renderList(view, params) {
  setTitle('Records');
  const q = h('input', { id: 'rec-q', type: 'search', size: 20, value: params.get('q') || '' });
  const schema = h('input', { id: 'rec-schema', size: 16, value: params.get('schema_name') || '' });
  const tag = h('input', { id: 'rec-tag', size: 14, value: params.get('tag') || '' });
  const prefix = h('input', { id: 'rec-path', size: 14, value: params.get('path_prefix') || '' });
  // Search by words (text), by meaning (vector) or both (hybrid: the server's default when it embeds).
  const mode = h('select', { id: 'rec-mode' }, ['', 'text', 'hybrid', 'vector'].map((m) => h('option', { value: m }, m || 'default')));
  mode.value = params.get('mode') || '';
  const searching = () => q.value.trim() !== '';
  const paged = pagedTable(['Title', 'Schema', 'Path', 'Tags', 'Version', 'Updated'], (r) => [
    link(`records/${encodeURIComponent(r.id)}`, r.title || short(r.id)), r.schema_name || '', r.path || '',
    (r.tags || []).join(', '), String(r.version ?? ''), when(r.updated_at)], () => (searching() ? 'Search results, best first' : 'Records, newest first'),
  async (cursor) => {
    if (!searching()) {
      return get(`/breadcrumbs${qs({ schema_name: schema.value.trim(), tag: tag.value.trim(), path_prefix: prefix.value.trim(), limit: 50, cursor })}`);
    }
    const found = await get(`/breadcrumbs/search${qs({ q: q.value.trim(), mode: mode.value, schema_name: schema.value.trim(), tag: tag.value.trim(), limit: 50 })}`);
    return { items: found.items, next_cursor: null }; // search answers one page
  });
  const load = paged.load;
  view.append(h('h1', {}, 'Records'),
    h('form', { class: 'inline', role: 'search', 'aria-label': 'Find records', onsubmit: (e) => { e.preventDefault(); load(false); } },
      field('Search', q), field('Search mode', mode), field('Schema', schema), field('Tag', tag), field('Path prefix', prefix), h('button', { type: 'submit' }, 'Find')),
    paged.node);
  load(false);
}

function renderOne(view, id) {
  setTitle(`Record ${short(id)}`);
  const head = h('div', { class: 'panel' }, 'loading…');
  const editor = h('textarea', { id: 'rec-editor', rows: 14, spellcheck: 'false', 'aria-describedby': 'rec-edit-error' });
  const editError = h('div', { id: 'rec-edit-error' });
  const history = h('div', { id: 'rec-history' });
  let version = null;
  let loaded = ''; // the record as loaded, to show what someone else changed on a 412
  const denied = h('p', { class: 'muted', id: 'rec-edit-denied', hidden: true });
  const editSection = h('section', { 'aria-label': 'Edit', hidden: true }, h('h2', {}, 'Edit'),
    h('form', {
      'aria-label': 'Edit the record', onsubmit: async (e) => { e.preventDefault(); save(); },
    }, h('label', { for: 'rec-editor' }, 'Title, tags and context (JSON); saved with If-Match on the version you loaded'), editor, editError,
    h('div', { class: 'toolbar' }, h('button', { type: 'submit', id: 'rec-save' }, 'Save'),
      h('button', { type: 'button', class: 'secondary', onclick: () => load() }, 'Reload'))));
  view.append(h('h1', {}, `Record ${short(id)}`), head, denied, editSection, h('h2', {}, 'History'), history);

  async function save() {
    let patch;
    try { patch = JSON.parse(editor.value); } catch (e) {
      editor.setAttribute('aria-invalid', 'true');
      return clear(editError, errorBox({ message: `not JSON: ${e.message}` }));
    }
    editor.removeAttribute('aria-invalid');
    try {
      await api('PATCH', `/breadcrumbs/${encodeURIComponent(id)}`, patch, { 'If-Match': `"${version}"` });
      clear(editError, h('p', { class: 'ok', role: 'status' }, 'saved'));
      load(true);
    } catch (e) {
      if (e.status === 412) {
        let current = '';
        let theirs = null;
        try {
          const now = await get(`/breadcrumbs/${encodeURIComponent(id)}/full`);
          current = now.version;
          theirs = diffView(loaded, pretty({ title: now.title, tags: now.tags, context: now.context }), 'the change made meanwhile');
        } catch { /* the message says enough */ }
        clear(editError, h('div', { class: 'error', role: 'alert', id: 'rec-conflict' },
          `412 conflict: you edited version ${version}, the record is now at version ${current}. Nothing was saved. `,
          'The change made meanwhile is below; reload, then edit again.'), theirs);
      } else {
        if (e.field) editor.setAttribute('aria-invalid', 'true');
        clear(editError, errorBox(e));
      }
    }
  }
  async function load(keepMessage) {
    try {
      const r = await get(`/breadcrumbs/${encodeURIComponent(id)}/full`);
      version = r.version;
      clear(head, h('dl', { class: 'grid' }, [['Title', r.title], ['Schema', r.schema_name || '—'], ['Path', r.path || '—'],
        ['Version', h('span', { id: 'rec-version' }, String(r.version))], ['Updated', `${when(r.updated_at)} by ${r.updated_by || ''}`],
        ['Created', `${when(r.created_at)} by ${r.created_by || ''}`]].map(([k, v]) => h('div', { class: 'stat' }, h('dt', { class: 'label' }, k), h('dd', { class: 'value' }, v)))),
      r.path ? h('p', {}, link(`events?path=${encodeURIComponent(r.path)}`, 'tail its events')) : null);
      const role = DEFINITIONS.has(r.schema_name) ? 'developer' : 'user';
      editSection.hidden = !may(role);
      denied.hidden = may(role);
      denied.textContent = needs(role, 'edit this record');
      editor.value = pretty({ title: r.title, tags: r.tags, context: r.context });
      loaded = editor.value;
      if (!keepMessage) clear(editError);
      const hist = await get(`/breadcrumbs/${encodeURIComponent(id)}/history`);
      const versions = hist.versions || [];
      const show = (v) => pretty({ title: v.title, tags: v.tags, context: v.context });
      clear(history, versions.slice().reverse().map((v, i, arr) => h('details', { open: i === 0 },
        h('summary', {}, `version ${v.version} · ${when(v.updated_at)} · ${v.updated_by || ''}`),
        diffView(i + 1 < arr.length ? show(arr[i + 1]) : '', show(v), `changes in version ${v.version}`))));
    } catch (e) { clear(head, errorBox(e)); }
  }
  load();
}
