#!/usr/bin/env node
// The dashboard with authentication on: sign in with an API key, see who you are (GET /auth/me),
// and find only the controls your role may use — while the server still refuses (403) what a
// role may not do when a request is forced past the page. Started by tests/e2e/ui_test.cpp with
// a server run with --auth=on and the scripted LLM; besides harness.mjs's CAIRN_URL,
// CAIRN_UI_SHOTS and CHROMIUM it passes:
//
//   CAIRN_ADMIN_KEY   the bootstrap admin key (to make the keys and the data the pages show)
//   CAIRN_UI_AGENT    the id to define an agent under; its model is scripted: "ask me" → a
//                     user_input question "Which colour?", anything else → a plain answer
//
// Prints "ok <step>" per step; exits 1 if a step failed.
import { BASE, WAIT, requireEnv, check, http, until, openBrowser } from './harness.mjs';

requireEnv('CAIRN_ADMIN_KEY', 'CAIRN_UI_AGENT');
const AGENT = process.env.CAIRN_UI_AGENT;
const bearer = (key) => ({ Authorization: `Bearer ${key}` });
const admin = (method, p, body) => http(method, p, body, bearer(process.env.CAIRN_ADMIN_KEY));
async function ok(response, status, what) {
  const r = await response;
  check(r.status === status, `${what} → ${r.status} ${JSON.stringify(r.data)}`);
  return r.data;
}

const { page, consoleErrors, step, axe, shot, go, finish } = await openBrowser();

// ---- the data the pages show, made with the bootstrap admin key -----------------------------------
const readerKey = (await ok(admin('POST', '/tenants/default/keys', { principal: 'rita', roles: ['reader'] }), 201, 'reader key')).key;
const devKey = (await ok(admin('POST', '/tenants/default/keys', { principal: 'dora', roles: ['developer'] }), 201, 'developer key')).key;
const userKey = (await ok(admin('POST', '/tenants/default/keys', { principal: 'ursula', roles: ['user'] }), 201, 'user key')).key;
await ok(admin('POST', '/breadcrumbs', { schema_name: 'agent.def.v1', title: AGENT,
  context: { agent_id: AGENT, system_prompt: 'You are the roles test agent.', tools: ['user_input'], stream: false } }), 201, 'the agent');
// Readers and users see only the sessions they started (docs/security.md), so the admin starts
// one for each, acting for them (X-Cairn-Actor); each run pauses on its question.
async function pausedSessionOf(principal) {
  const as = { ...bearer(process.env.CAIRN_ADMIN_KEY), 'X-Cairn-Actor': principal };
  const id = (await ok(http('POST', '/sessions', { agent_id: AGENT, title: `Roles of ${principal}` }, as), 201, 'a session')).id;
  const asked = await ok(http('POST', `/sessions/${id}/messages`, { content: 'ask me something' }, as), 202, 'a message');
  await until(async () => (await admin('GET', `/executions/${asked.execution_id}`)).data.status === 'paused',
    'the run to pause on its question');
  return { sid: id, eid: asked.execution_id };
}
const { sid, eid } = await pausedSessionOf('rita');
const ursulas = await pausedSessionOf('ursula');
const recordId = (await ok(admin('POST', '/breadcrumbs', { title: 'roles note', tags: ['roles'], context: { n: 1 } }), 201, 'a record')).id;
const tools = await ok(admin('GET', '/breadcrumbs?schema_name=tool.v1&limit=100&include_context=true'), 200, 'the tools');
const echo = tools.items.find((t) => t.context && t.context.name === 'echo');
check(echo, 'the built-in echo tool exists');

// A request made from the page with `key`, past its controls: the server must still decide.
const forced = (method, p, key, body) => page.evaluate(async ([m, url, k, b]) => {
  const res = await fetch(url, { method: m, headers: { Authorization: `Bearer ${k}`, 'Content-Type': 'application/json' }, body: b });
  return res.status;
}, [method, p, key, body === undefined ? undefined : JSON.stringify(body)]);

async function signIn(key, role) {
  await go('#/overview');
  await page.fill('#api-key', key);
  const sent = page.waitForRequest((r) => r.url() === `${BASE}/auth/me` && r.headers().authorization === `Bearer ${key}`, { timeout: WAIT });
  await page.click('#auth button[type=submit]');
  await sent;
  await page.waitForFunction((r) => document.querySelector('#whoami-role')?.textContent === r, role, { timeout: WAIT });
  check(await page.evaluate(() => sessionStorage.getItem('cairn.apiKey')) === key, 'the key is in sessionStorage');
}
const absent = async (selector, what) => check(await page.locator(selector).count() === 0, `${what} (${selector}) is not offered`);
const present = async (selector, what) => check(await page.locator(selector).count() > 0, `${what} (${selector}) is offered`);

await step('without a key the page asks for one; a refused key is not kept', async () => {
  await go('#/overview');
  await page.waitForSelector('#api-key', { timeout: WAIT });
  await absent('#whoami', 'an identity');
  await page.fill('#api-key', 'ck_not_a_key');
  await page.click('#auth button[type=submit]');
  await page.waitForFunction(() => /refused that key/.test(document.querySelector('#auth .error')?.textContent || ''), null, { timeout: WAIT });
  check(await page.evaluate(() => sessionStorage.getItem('cairn.apiKey')) === null, 'the refused key is forgotten');
  await axe('sign-in');
});

await step('a reader signs in and sees the principal and the role', async () => {
  await signIn(readerKey, 'reader');
  check(/rita/.test(await page.textContent('#whoami')), 'the principal is named');
  await page.waitForSelector('#rates-denied', { timeout: WAIT });
  await page.waitForSelector('#hooks-denied', { timeout: WAIT });
  await page.waitForSelector('#count-completed', { timeout: WAIT });
  await axe('overview as a reader');
});

await step('a reader is offered nothing that writes: no send, answer, cancel, resume, edit or try', async () => {
  await go('#/sessions');
  await page.waitForSelector(`main tbody a[href="#/sessions/${sid}"]`, { timeout: WAIT });
  await absent(`main tbody a[href="#/sessions/${ursulas.sid}"]`, "another user's session");
  await present('#new-session-denied', 'the reason');
  await absent('#new-session-agent', 'a new session');

  await go(`#/sessions/${sid}`);
  await page.waitForFunction(() => /Which colour\?/.test(document.querySelector('.msg.notification')?.textContent || ''), null, { timeout: WAIT });
  await present('#chat-readonly', 'the reason');
  await absent('#chat-input, #send', 'sending');
  await absent('#cancel-run', 'cancelling');
  await absent('.msg.notification form', 'answering');
  await shot('session-reader');
  await axe('session as a reader');

  await go(`#/executions/${eid}`);
  await page.waitForFunction(() => /paused/.test(document.querySelector('#exec-status-value')?.textContent || ''), null, { timeout: WAIT });
  await absent('#exec-cancel, #exec-resume', 'cancel and resume');

  await go('#/definitions/tools');
  await page.waitForSelector('main tbody a', { timeout: WAIT });
  await present('#def-denied', 'the reason');
  await absent('#def-new', 'a new definition');
  await go(`#/definitions/tools/${echo.id}`);
  await page.waitForFunction(() => /"name": "echo"/.test(document.querySelector('#def-editor')?.value || ''), null, { timeout: WAIT });
  await absent('#def-save', 'saving');
  await absent('#try-run', 'trying the tool');
  check(await page.getAttribute('#def-editor', 'readonly') !== null, 'the editor is read-only');

  await go(`#/records/${recordId}`);
  await page.waitForFunction(() => document.querySelector('#rec-version')?.textContent === '1', null, { timeout: WAIT });
  check(await page.isVisible('#rec-edit-denied') && !(await page.isVisible('#rec-save')), 'the record has no editor, only the reason');
  await absent('#auth .error', 'an error: the pages asked for nothing the role may not have, so no 403');
});

await step('the page is not the boundary: forced past it, the server answers 403', async () => {
  check(await forced('POST', `/sessions/${sid}/messages`, readerKey, { content: 'let me in' }) === 403, 'a reader sending a message');
  check(await forced('POST', `/executions/${eid}/cancel`, readerKey) === 403, 'a reader cancelling');
  check(await forced('PATCH', `/breadcrumbs/${recordId}`, readerKey, { title: 'mine' }) === 403, 'a reader editing');
  check(await forced('GET', '/metrics', readerKey) === 403, 'a reader reading the metrics');
  const run = await admin('GET', `/executions/${eid}`);
  check(run.data.status === 'paused', `the run is still paused: ${run.data.status}`);
  const rec = await admin('GET', `/breadcrumbs/${recordId}/full`);
  check(rec.data.version === 1 && rec.data.title === 'roles note', 'the record is unchanged');
});

await step('signing out forgets the key', async () => {
  await page.click('#sign-out');
  await page.waitForSelector('#api-key', { timeout: WAIT });
  check(await page.evaluate(() => sessionStorage.getItem('cairn.apiKey')) === null, 'no key kept');
});

await step('a user is offered sessions, answers and record edits, but no definition edits', async () => {
  await signIn(userKey, 'user');
  await page.waitForSelector('#hooks-denied', { timeout: WAIT });
  await go(`#/sessions/${ursulas.sid}`);
  await page.waitForSelector('.msg.notification form', { timeout: WAIT });
  await present('#chat-input, #send', 'sending');
  await go(`#/records/${recordId}`);
  await page.waitForFunction(() => document.querySelector('#rec-version')?.textContent === '1', null, { timeout: WAIT });
  check(await page.isVisible('#rec-save'), 'a plain record can be edited');
  await go(`#/records/${echo.id}`); // a definition is a record too: developers edit it
  await page.waitForFunction(() => /tool\.v1/.test(document.querySelector('main .panel')?.textContent || ''), null, { timeout: WAIT });
  check(await page.isVisible('#rec-edit-denied') && !(await page.isVisible('#rec-save')), 'a definition record has no editor for a user');
  await go(`#/definitions/tools/${echo.id}`);
  await page.waitForSelector('#try-run', { timeout: WAIT }); // trying a tool is a user's write
  await absent('#def-save', 'saving a definition');
  await go('#/definitions/agents');
  await page.waitForSelector('#def-denied', { timeout: WAIT });
  await absent('#def-new', 'a new definition');
  check(await forced('POST', '/breadcrumbs', userKey, { schema_name: 'agent.def.v1', title: 'x', context: { agent_id: 'ursula-made' } }) === 403,
    'a user writing a definition');
  await absent('#auth .error', 'an error: no 403 from what the page offered');
  await page.click('#sign-out');
  await page.waitForSelector('#api-key', { timeout: WAIT });
});

await step('a developer is offered sessions, runs and definitions, but not the metrics', async () => {
  await signIn(devKey, 'developer');
  await page.waitForSelector('#rates-denied', { timeout: WAIT }); // /metrics is for admins
  await page.waitForSelector('main tbody', { timeout: WAIT }); // the webhooks table
  await absent('#hooks-denied', 'a refusal of the webhooks');
  check(await forced('GET', '/metrics', devKey) === 403, 'a developer reading the metrics');

  await go(`#/sessions/${sid}`);
  await page.waitForSelector('.msg.notification form', { timeout: WAIT });
  await present('#chat-input', 'the message field');
  await present('#send', 'sending');
  await page.waitForSelector('#cancel-run:not([disabled])', { timeout: WAIT });

  await go(`#/executions/${eid}`);
  await page.waitForSelector('#exec-resume', { timeout: WAIT });
  await present('#exec-cancel', 'cancelling');

  await go(`#/definitions/tools/${echo.id}`);
  await page.waitForSelector('#try-run', { timeout: WAIT });
  await present('#def-save', 'saving');

  await go('#/definitions/agents');
  await page.click('#def-new');
  await page.waitForSelector('#def-editor', { timeout: WAIT });
  await page.fill('#def-editor', JSON.stringify({ agent_id: 'dora-made', system_prompt: 'You help.' }, null, 2));
  await page.click('#def-save');
  await page.waitForFunction(() => /^#\/definitions\/agents\/[^/]+$/.test(location.hash) && !location.hash.endsWith('/new'), null, { timeout: WAIT });
  const made = decodeURIComponent(await page.evaluate(() => location.hash.split('/')[3]));
  const def = await admin('GET', `/breadcrumbs/${made}/full`);
  check(def.status === 200 && def.data.context.agent_id === 'dora-made' && def.data.created_by === 'dora', `the agent: ${JSON.stringify(def.data)}`);
  await axe('definition as a developer');
});

await step('no script errors', async () => {
  check(consoleErrors.length === 0, `errors: ${consoleErrors.join(' | ')}`);
});

await finish();
