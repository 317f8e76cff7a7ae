// The dashboard: a hash router (#/page/arg) over the page modules, and the API-key sign-in.
import { apiKey, setApiKey } from './api.js';
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

function renderAuth() {
  const box = document.getElementById('auth');
  if (apiKey()) {
    clear(box, h('span', { class: 'muted' }, 'signed in with an API key '),
      h('button', { type: 'button', onclick: () => { setApiKey(''); renderAuth(); route(); } }, 'Sign out'));
    return;
  }
  const input = h('input', { type: 'password', id: 'api-key', autocomplete: 'off', placeholder: 'API key', size: 14 });
  clear(box, h('form', {
    class: 'inline', onsubmit: (e) => {
      e.preventDefault();
      if (!input.value.trim()) return;
      setApiKey(input.value.trim());
      renderAuth();
      route();
    },
  }, h('label', { for: 'api-key', class: 'sr-only' }, 'API key'), input, h('button', { type: 'submit' }, 'Sign in')));
}

// A 401/403 from any call: say so once, next to the sign-in.
window.addEventListener('cairn-auth', (e) => {
  const box = document.getElementById('auth');
  if (!box.querySelector('.error')) box.append(errorBox({ message: e.detail === 401 ? 'sign in with an API key' : 'your key may not do that' }));
});
window.addEventListener('hashchange', route);
renderAuth();
route();
