// A line diff of two texts (longest common subsequence), for record history and snapshots.
import { h } from './dom.js';

const MAX_CELLS = 4_000_000; // lines(a) × lines(b) above this: shown as a whole replacement

// [{op: ' ' | '-' | '+', line}] turning `a` into `b`.
export function diffLines(a, b) {
  const x = a.split('\n');
  const y = b.split('\n');
  // Common prefix and suffix first: most changes are small.
  let start = 0;
  while (start < x.length && start < y.length && x[start] === y[start]) start++;
  let ex = x.length;
  let ey = y.length;
  while (ex > start && ey > start && x[ex - 1] === y[ey - 1]) { ex--; ey--; }
  const out = x.slice(0, start).map((line) => ({ op: ' ', line }));
  const mx = x.slice(start, ex);
  const my = y.slice(start, ey);
  if (mx.length * my.length > MAX_CELLS) {
    mx.forEach((line) => out.push({ op: '-', line }));
    my.forEach((line) => out.push({ op: '+', line }));
  } else {
    const n = mx.length;
    const m = my.length;
    const len = new Array(n + 1);
    for (let i = 0; i <= n; i++) len[i] = new Uint32Array(m + 1);
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        len[i][j] = mx[i] === my[j] ? len[i + 1][j + 1] + 1 : Math.max(len[i + 1][j], len[i][j + 1]);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n && j < m) {
      if (mx[i] === my[j]) { out.push({ op: ' ', line: mx[i] }); i++; j++; }
      else if (len[i + 1][j] >= len[i][j + 1]) out.push({ op: '-', line: mx[i++] });
      else out.push({ op: '+', line: my[j++] });
    }
    while (i < n) out.push({ op: '-', line: mx[i++] });
    while (j < m) out.push({ op: '+', line: my[j++] });
  }
  x.slice(ex).forEach((line) => out.push({ op: ' ', line }));
  return out;
}

// A <pre> showing the diff of `a` → `b`; unchanged runs longer than 6 lines are folded.
export function diffView(a, b, label) {
  const rows = diffLines(a, b);
  const pre = h('pre', { class: 'diff', tabindex: '0', 'aria-label': label || 'difference' });
  if (!rows.some((r) => r.op !== ' ')) {
    pre.append(h('span', { class: 'muted' }, 'no difference'));
    return pre;
  }
  let run = [];
  const flush = () => {
    if (run.length > 6) {
      run.slice(0, 2).forEach((r) => pre.append(h('span', { class: 'd-same' }, `  ${r.line}\n`)));
      pre.append(h('span', { class: 'd-fold' }, `  … ${run.length - 4} unchanged lines\n`));
      run.slice(-2).forEach((r) => pre.append(h('span', { class: 'd-same' }, `  ${r.line}\n`)));
    } else {
      run.forEach((r) => pre.append(h('span', { class: 'd-same' }, `  ${r.line}\n`)));
    }
    run = [];
  };
  for (const r of rows) {
    if (r.op === ' ') { run.push(r); continue; }
    flush();
    pre.append(h(r.op === '+' ? 'ins' : 'del', { class: r.op === '+' ? 'd-add' : 'd-del' }, `${r.op} ${r.line}\n`));
  }
  flush();
  return pre;
}
