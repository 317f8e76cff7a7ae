// The dashboard: a hash router (#/page/arg) over the page modules, and the API-key sign-in (then
// GET /auth/me: who we are, so the pages offer only what the role allows; caller.js).
import { apiKey, setApiKey } from './api.js';
import { loadCaller, caller, roleName } from './caller.js';
import { h, clear, errorBox } from './dom.js';
import * as overview from './overview.js';
import * as sessions from './sessions.js';
import * as executions from './executions.js';
import * as events from './events.js';
import * as records from './records.js';
import * as definitions from './definitions.js';

const pages = { overview, sessions, executions, events, records, definitions };
const main = document.getElementById('main');
let cleanup = null; // what the current page must stop (streams, timers) when left

function route() {
  const [path, query = ''] = location.hash.replace(/^#\/?/, '').split('?');
  const [name = 'overview', ...rest] = path.split('/');
  const page = pages[name] || overview;
  if (cleanup) { try { cleanup(); } catch { /* already stopped */ } }
  cleanup = null;
  for (const a of document.querySelectorAll('#nav a')) {
    if (a.dataset.page === (pages[name] ? name : 'overview')) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const view = h('div', { class: 'page' });
  clear(main, view);
  try {
    const stop = page.render(view, rest.map(decodeURIComponent), new URLSearchParams(query));
    cleanup = typeof stop === 'function' ? stop : null;
  } catch (e) {
    view.append(errorBox(e));
  }
}

// The top bar's sign-in: who the page acts as (GET /auth/me) and their role, or a key field.
function renderAuth(message) {
  const box = document.getElementById('auth');
  const me = caller();
  const signOut = () => { setApiKey(''); start(); };
  if (me && me.auth === 'none') {
    clear(box, h('span', { class: 'muted', id: 'whoami' }, `${me.principal} · ${roleName()} (authentication is off)`),
      apiKey() ? h('button', { type: 'button', class: 'secondary', onclick: signOut }, 'Forget key') : null);
    return;
  }
  if (me) {
    clear(box, h('span', { class: 'muted', id: 'whoami' }, 'signed in as ', h('strong', {}, me.principal), ` (${me.tenant}) · `,
      h('span', { id: 'whoami-role' }, roleName())),
    h('button', { type: 'button', class: 'secondary', id: 'sign-out', onclick: signOut }, 'Sign out'));
    return;
  }
  const input = h('input', { type: 'password', id: 'api-key', autocomplete: 'off', placeholder: 'API key', size: 14 });
  clear(box, h('form', {
    class: 'inline', 'aria-label': 'Sign in', onsubmit: async (e) => {
      e.preventDefault();
      if (!input.value.trim()) return;
      setApiKey(input.value.trim());
      const who = await loadCaller();
      if (!who) setApiKey(''); // refused: keep nothing
      show(who ? '' : 'the server refused that key');
    },
  }, h('label', { for: 'api-key', class: 'sr-only' }, 'API key'), input, h('button', { type: 'submit' }, 'Sign in')),
  message ? errorBox({ message }) : null);
}

function show(message) {
  renderAuth(message);
  route();
}

// Who we are first (the pages show only what the role allows), then the page.
async function start() {
  await loadCaller();
  show();
}

// A 401/403 from any call: say so once, next to the sign-in.
window.addEventListener('cairn-auth', (e) => {
  const box = document.getElementById('auth');
  if (!box.querySelector('.error')) box.append(errorBox({ message: e.detail === 401 ? 'sign in with an API key' : 'your key may not do that' }));
});
window.addEventListener('hashchange', route);
start();
