// Definitions: tools (tool.v1), agents (agent.def.v1) and workflows (workflow.def.v1), which are
// breadcrumbs. List them; create and edit their JSON (a 422 is shown at the field it names); try a
// tool with a form generated from its input schema (a tool.request.v1, answered on the event stream).
import { api, get, qs, stream } from './api.js';
import { h, clear, errorBox, table, link, field, pretty, setTitle, short } from './dom.js';
import { schemaForm } from './schema_form.js';
import { may, needs } from './caller.js';

const KINDS = {
  tools: { schema: 'tool.v1', label: 'Tools', name: (c) => c.name, info: (c) => c.runtime,
    example: { name: 'my_tool', description: '', runtime: 'http', url: 'https://example.com/tool', input_schema: { type: 'object', properties: { text: { type: 'string' } } } } },
  agents: { schema: 'agent.def.v1', label: 'Agents', name: (c) => c.agent_id, info: (c) => c.model || 'default model',
    example: { agent_id: 'my_agent', system_prompt: 'You are helpful.', tools: [] } },
  workflows: { schema: 'workflow.def.v1', label: 'Workflows', name: (c) => c.name, info: (c) => `${(c.steps || []).length} steps`,
    example: { name: 'my_workflow', steps: [{ id: 'first', tool: 'echo', input: { text: '${{ input.text }}' } }] } },
};

export function render(view, [kind = 'tools', id]) {
  const k = KINDS[kind] ? kind : 'tools';
  view.append(h('h1', {}, 'Definitions'), h('nav', { 'aria-label': 'Definition kinds', class: 'toolbar' },
    Object.entries(KINDS).map(([key, v]) => h('a', { href: `#/definitions/${key}`, class: 'button', 'aria-current': key === k ? 'page' : null }, v.label))));
  return id ? renderEditor(view, k, id) : renderList(view, k);
}

function renderList(view, kind) {
  const k = KINDS[kind];
  setTitle(k.label);
  const list = h('div', { class: 'table-wrap' });
  view.append(h('p', {}, may('developer') ? link(`definitions/${kind}/new`, `New ${kind.slice(0, -1)}`, { id: 'def-new' })
    : h('span', { class: 'muted', id: 'def-denied' }, needs('developer', 'create or edit definitions'))), list);
  get(`/breadcrumbs${qs({ schema_name: k.schema, include_context: true, limit: 500, order: 'asc' })}`).then((data) => {
    clear(list, table(['Name', 'Kind', 'Description', 'Built in', 'Version'], data.items || [], (r) => {
      const c = r.context || {};
      return [link(`definitions/${kind}/${encodeURIComponent(r.id)}`, k.name(c) || r.title), k.info(c) || '', c.description || '',
        r.created_by === 'system' ? 'yes (read-only)' : 'no', String(r.version)];
    }, k.label));
  }).catch((e) => clear(list, errorBox(e)));
}

// The offset range in the pretty-printed `text` of the key `fieldPath` names ("context.a.b[2].c"),
// or null: the keys are looked for in order, each after the previous one.
export function locate(text, fieldPath) {
  const keys = String(fieldPath).replace(/\[\d+\]/g, '').split('.').filter(Boolean);
  if (keys[0] === 'context') keys.shift();
  let from = 0;
  let found = null;
  for (const key of keys) {
    const at = text.indexOf(`${JSON.stringify(key)}:`, from);
    if (at < 0) break;
    found = [at, at + JSON.stringify(key).length];
    from = found[1];
  }
  return found;
}

function renderEditor(view, kind, id) {
  const k = KINDS[kind];
  const isNew = id === 'new';
  const canDefine = may('developer');
  setTitle(isNew ? `New ${kind.slice(0, -1)}` : `${k.label}: ${short(id)}`);
  const title = h('input', { id: 'def-title', size: 30 });
  const editor = h('textarea', { id: 'def-editor', rows: 18, spellcheck: 'false', 'aria-describedby': 'def-field-error', readonly: !canDefine });
  if (!canDefine) title.readOnly = true;
  const fieldError = h('div', { id: 'def-field-error', 'aria-live': 'assertive' });
  const saved = h('div', { role: 'status' });
  const tryBox = h('div');
  let version = null;
  view.append(h('h2', {}, isNew ? `New ${kind.slice(0, -1)}` : `Edit ${kind.slice(0, -1)}`),
    h('form', { 'aria-label': 'Definition', onsubmit: (e) => { e.preventDefault(); save(); } },
      field('Title', title), h('label', { for: 'def-editor' }, `Definition (the ${k.schema} context, JSON)`), editor, fieldError,
      h('div', { class: 'toolbar' }, canDefine ? h('button', { type: 'submit', id: 'def-save' }, isNew ? 'Create' : 'Save')
        : h('span', { class: 'muted', id: 'def-denied' }, needs('developer', 'create or edit definitions')), saved)),
    tryBox);

  function showError(e) {
    const where = e.field || '';
    clear(fieldError, h('p', { class: 'field-error', role: 'alert' }, where ? h('strong', { class: 'def-field' }, `${where}: `) : null,
      `${e.status ? `${e.status} ${e.code}: ` : ''}${e.message}`));
    const range = where ? locate(editor.value, where) : null;
    if (range || where.startsWith('context') || !where) {
      editor.setAttribute('aria-invalid', 'true');
      if (range) {
        editor.focus();
        editor.setSelectionRange(range[0], range[1]);
        const line = editor.value.slice(0, range[0]).split('\n').length;
        fieldError.firstChild.append(h('span', { class: 'muted' }, ` (line ${line} of the definition)`));
      }
    } else if (where === 'title') title.setAttribute('aria-invalid', 'true');
  }
  async function save() {
    if (!canDefine) return;
    clear(fieldError);
    clear(saved);
    editor.removeAttribute('aria-invalid');
    title.removeAttribute('aria-invalid');
    let context;
    try { context = JSON.parse(editor.value); } catch (e) { return showError({ message: `not JSON: ${e.message}` }); }
    try {
      if (isNew) {
        const r = await api('POST', '/breadcrumbs', { schema_name: k.schema, title: title.value.trim() || k.name(context) || kind, context });
        location.hash = `#/definitions/${kind}/${encodeURIComponent(r.data.id)}`;
      } else {
        const r = await api('PATCH', `/breadcrumbs/${encodeURIComponent(id)}`, { title: title.value.trim(), context }, { 'If-Match': `"${version}"` });
        version = r.data.version;
        clear(saved, h('span', { class: 'ok' }, `saved, version ${version}`));
      }
    } catch (e) { showError(e); }
  }

  if (isNew) {
    title.value = '';
    editor.value = pretty(k.example);
    return undefined;
  }
  let es = null;
  get(`/breadcrumbs/${encodeURIComponent(id)}/full`).then((r) => {
    version = r.version;
    title.value = r.title;
    editor.value = pretty(r.context);
    if (r.created_by === 'system') saved.append(h('span', { class: 'muted' }, 'built in: read-only (copy it under another name to change it)'));
    if (kind === 'tools' && may('user')) renderTry(r.context || {});
  }).catch((e) => showError(e));

  function renderTry(tool) {
    const form = schemaForm(tool.input_schema || { type: 'object' });
    const out = h('div', { id: 'try-result', 'aria-live': 'polite' });
    clear(tryBox, h('h2', {}, `Try ${tool.name}`), h('form', {
      'aria-label': `Try ${tool.name}`, onsubmit: async (e) => {
        e.preventDefault();
        let input;
        try { input = form.value(); } catch (x) { return clear(out, errorBox(x)); }
        const rid = `ui-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
        clear(out, h('p', { class: 'muted' }, `request ${rid} sent, waiting for the answer…`));
        if (es) es.close();
        es = stream(`/events/stream${qs({ schema_name: 'tool.response.v1', tag: `request:${rid}` })}`);
        es.onmessage = (m) => {
          let d;
          try { d = JSON.parse(m.data); } catch { return; }
          if (d.type !== 'breadcrumb.created') return;
          const c = d.context || {};
          clear(out, h('p', {}, 'status ', h('strong', {}, c.status || '?'), c.duration_ms !== undefined ? ` in ${c.duration_ms} ms` : ''),
            h('pre', { tabindex: '0' }, pretty(c.status === 'success' ? c.output : c.error ?? c)));
          es.close();
        };
        let sent = false; // onopen runs again after a reconnect: one request only
        es.onopen = async () => {
          if (sent) return;
          sent = true;
          try {
            await api('POST', '/breadcrumbs', { title: `try ${tool.name}`, schema_name: 'tool.request.v1', context: { tool: tool.name, input, request_id: rid } });
          } catch (x) { clear(out, errorBox(x)); es.close(); }
        };
      },
    }, form.node, h('button', { type: 'submit', id: 'try-run' }, 'Run')), out);
  }
  return () => { if (es) es.close(); };
}
