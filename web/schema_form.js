// A form generated from a tool's input_schema (the JSON Schema subset of docs/executors.md):
// one control per property of an object schema — text (or a list for `enum`), number, checkbox,
// and JSON for objects, arrays and anything else. Any other schema gets one JSON box.
import { h, field } from './dom.js';

let counter = 0;

function control(name, schema, required, id) {
  const label = `${name}${required ? ' (required)' : ''}${schema.description ? ` — ${schema.description}` : ''}`;
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  let el;
  let read;
  if (Array.isArray(schema.enum)) {
    el = h('select', { id }, required ? null : h('option', { value: '' }, '—'),
      schema.enum.map((v, i) => h('option', { value: String(i) }, JSON.stringify(v))));
    read = () => (el.value === '' ? undefined : schema.enum[Number(el.value)]);
  } else if (type === 'string') {
    el = h('input', { id, required, value: schema.default ?? '' });
    read = () => (el.value === '' && !required ? undefined : el.value);
  } else if (type === 'number' || type === 'integer') {
    el = h('input', { id, type: 'number', required, step: type === 'integer' ? '1' : 'any', value: schema.default ?? '' });
    read = () => (el.value === '' ? undefined : Number(el.value));
  } else if (type === 'boolean') {
    el = h('input', { id, type: 'checkbox', checked: schema.default === true });
    read = () => el.checked;
  } else {
    el = h('textarea', { id, rows: 3, placeholder: 'JSON', required }, schema.default !== undefined ? JSON.stringify(schema.default) : '');
    read = () => {
      if (!el.value.trim()) return undefined;
      try { return JSON.parse(el.value); } catch (e) { throw Object.assign(new Error(`${name}: not JSON (${e.message})`), { field: name }); }
    };
  }
  return { node: field(label, el), read };
}

// {node, value()}: value() returns the input, or throws an Error with `field` for bad JSON.
export function schemaForm(schema) {
  const base = `sf${++counter}`;
  const s = schema && typeof schema === 'object' ? schema : {};
  if (s.type === 'object' || (s.properties && typeof s.properties === 'object')) {
    const required = new Set(Array.isArray(s.required) ? s.required : []);
    const props = Object.entries(s.properties || {});
    const parts = props.map(([name, sub], i) => [name, control(name, sub || {}, required.has(name), `${base}-${i}`)]);
    const extra = props.length ? null : control('input (JSON object)', {}, false, `${base}-x`);
    return {
      node: h('div', { class: 'grid schema-form' }, parts.map(([, c]) => c.node), extra && extra.node),
      value() {
        if (extra) return extra.read() ?? {};
        const out = {};
        for (const [name, c] of parts) {
          const v = c.read();
          if (v !== undefined) out[name] = v;
        }
        return out;
      },
    };
  }
  const only = control('input (JSON)', {}, false, `${base}-x`);
  return { node: only.node, value: () => only.read() ?? null };
}
