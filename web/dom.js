// Small DOM helpers: element creation without innerHTML (server text is never parsed as HTML).

// h('div', {class: 'x', onclick: f}, child, ...): children are nodes, strings or arrays of them.
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'value') el.value = v;
    else if (k === 'checked') el.checked = !!v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

export const pretty = (v) => JSON.stringify(v, null, 2);

// "12:03:04" for today, else "2026-11-21 12:03".
export function when(ts) {
  if (ts === null || ts === undefined || ts === '') return '';
  const d = typeof ts === 'number' ? new Date(ts > 1e14 ? ts / 1000 : ts) : new Date(ts);
  if (Number.isNaN(d.getTime())) return String(ts);
  const iso = d.toISOString();
  return new Date().toISOString().slice(0, 10) === iso.slice(0, 10) ? iso.slice(11, 19) : `${iso.slice(0, 10)} ${iso.slice(11, 16)}`;
}

export function duration(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60000)} m ${Math.round((ms % 60000) / 1000)} s`;
}

// A run's duration: duration_ms, else completed_at − started_at.
export function runDuration(x) {
  if (x.duration_ms !== undefined && x.duration_ms !== null) return duration(x.duration_ms);
  if (!x.started_at || !x.completed_at) return '';
  return duration(Date.parse(x.completed_at) - Date.parse(x.started_at));
}

export const badge = (status) => h('span', { class: `badge s-${status || 'unknown'}` }, status || '?');

// The last 8 characters: ids are UUIDv7, whose leading digits are a timestamp shared by neighbours.
export const short = (id) => (id ? String(id).slice(-8) : '');

// A link to an in-app route.
export const link = (hash, text, attrs = {}) => h('a', { href: `#/${hash}`, ...attrs }, text);

// An error box (role=alert) for an ApiError or Error.
export function errorBox(e) {
  const where = e && e.field ? ` (at ${e.field})` : '';
  const status = e && e.status ? `${e.status} ${e.code || ''}: ` : '';
  return h('p', { class: 'error', role: 'alert' }, `${status}${e && e.message ? e.message : e}${where}`);
}

// A labelled form control: h('label') around a caption and the control.
export function field(caption, control) {
  return h('label', { class: 'field' }, h('span', {}, caption), control);
}

// A table of `rows` with the given column headers; `cells(row)` returns one cell per column.
export function table(headers, rows, cells, caption) {
  return h('table', {},
    caption ? h('caption', {}, caption) : null,
    h('thead', {}, h('tr', {}, headers.map((x) => h('th', { scope: 'col' }, x)))),
    h('tbody', {}, rows.length ? rows.map((r) => h('tr', {}, cells(r).map((c) => h('td', {}, c))))
      : h('tr', {}, h('td', { colspan: headers.length, class: 'muted' }, 'nothing here yet'))));
}

// A table filled a page at a time: load(false) starts again, load(true) (the "More" button) adds
// the next page. fetchPage(cursor) resolves {items, next_cursor}; caption may be a function.
export function pagedTable(headers, cells, caption, fetchPage) {
  const list = h('div', { class: 'table-wrap' });
  const more = h('div');
  let cursor = null;
  let rows = [];
  let latest = 0; // the newest load: an older one answering late (the list before a search) is dropped
  async function load(append) {
    const mine = ++latest;
    // The caption of what was asked, not of what the form says when the answer comes.
    const label = typeof caption === 'function' ? caption() : caption;
    try {
      const data = await fetchPage(append ? cursor : '');
      if (mine !== latest) return;
      rows = append ? rows.concat(data.items || []) : (data.items || []);
      cursor = data.next_cursor;
      clear(list, table(headers, rows, cells, label));
      clear(more, cursor ? h('button', { type: 'button', class: 'secondary', onclick: () => load(true) }, 'More') : null);
    } catch (e) {
      if (mine === latest) clear(list, errorBox(e));
    }
  }
  return { node: h('div', {}, list, more), load };
}

export function setTitle(text) {
  document.title = `${text} · cairn`;
}
