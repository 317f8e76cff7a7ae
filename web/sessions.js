// Sessions: the list, and a session as a chat (docs/sessions.md): send a message, watch the
// tokens stream, tool calls, sub-agents (what they say as they go) and the end of sub-runs inline,
// info messages folded, answer a paused user_input, cancel the running execution. The chat follows
// GET /sessions/{id}/events.
import { api, get, qs, stream } from './api.js';
import { h, clear, errorBox, table, badge, short, when, link, field, setTitle } from './dom.js';
import { may, needs } from './caller.js';

const ENDED = new Set(['execution.completed', 'execution.failed', 'execution.cancelled']);

export function render(view, [id]) {
  return id ? renderChat(view, id) : renderList(view);
}

function renderList(view) {
  setTitle('Sessions');
  const status = h('select', { id: 'session-status' }, ['', 'active', 'archived', 'closed'].map((s) => h('option', { value: s }, s || 'any')));
  const agent = h('input', { id: 'session-agent-filter', size: 16 });
  const list = h('div', { class: 'table-wrap' });
  const newAgent = h('input', { id: 'new-session-agent', value: 'default-chat-assistant', required: true, size: 22 });
  const newTitle = h('input', { id: 'new-session-title', size: 22 });
  const made = h('div');
  async function load() {
    try {
      const data = await get(`/sessions${qs({ status: status.value, agent_id: agent.value.trim(), limit: 100 })}`);
      clear(list, table(['Title', 'Agent', 'Status', 'Tokens', 'Updated'], data.items || [], (s) => [
        link(`sessions/${encodeURIComponent(s.id)}`, s.title || short(s.id)), s.agent_id, badge(s.status),
        String((s.token_usage && s.token_usage.total) || 0), when(s.updated_at)], 'Sessions, newest first'));
    } catch (e) { clear(list, errorBox(e)); }
  }
  view.append(h('h1', {}, 'Sessions'),
    !may('user') ? h('p', { class: 'muted', id: 'new-session-denied' }, needs('user', 'start sessions')) : h('form', {
      class: 'inline panel', 'aria-label': 'New session', onsubmit: async (e) => {
        e.preventDefault();
        try {
          const body = { agent_id: newAgent.value.trim() };
          if (newTitle.value.trim()) body.title = newTitle.value.trim();
          const r = await api('POST', '/sessions', body);
          location.hash = `#/sessions/${encodeURIComponent(r.data.id)}`;
        } catch (err) { clear(made, errorBox(err)); }
      },
    }, field('Agent', newAgent), field('Title (optional)', newTitle), h('button', { type: 'submit' }, 'New session'), made),
    h('form', { class: 'inline', 'aria-label': 'Filter sessions', onsubmit: (e) => { e.preventDefault(); load(); } },
      field('Status', status), field('Agent', agent), h('button', { type: 'submit', class: 'secondary' }, 'Filter')),
    list);
  load();
}

function renderChat(view, sid) {
  setTitle('Session');
  const head = h('div', { class: 'toolbar' });
  const chat = h('div', { class: 'chat', id: 'chat', role: 'log', 'aria-live': 'polite', 'aria-label': 'Conversation', tabindex: '0' });
  const input = h('textarea', { id: 'chat-input', rows: 2, placeholder: 'Write a message (Ctrl+Enter sends)' });
  const sendError = h('div');
  const cancel = h('button', { type: 'button', class: 'danger', id: 'cancel-run', disabled: true, onclick: cancelActive }, 'Cancel run');
  const state = h('span', { class: 'muted', id: 'chat-state' }, 'connecting…');
  const active = new Set(); // the session's own runs that have not ended
  const paused = new Set(); // runs paused when the page loaded (their question is still open)
  const seen = new Set(); // message ids shown
  const streaming = new Map(); // execution id → bubble of its streamed tokens
  const folds = new Map(); // execution id → <details> of its info messages
  const subAgents = new Map(); // sub-agent execution id → its inline line
  let ready = false;
  const early = [];

  const canWrite = may('user'); // send, answer, cancel
  view.append(h('h1', {}, 'Session ', h('span', { id: 'session-title' }, short(sid))), head, chat,
    canWrite ? h('form', {
      class: 'inline', 'aria-label': 'Send a message', onsubmit: (e) => { e.preventDefault(); send(); },
    }, h('label', { for: 'chat-input', class: 'sr-only' }, 'Message'), input, h('button', { type: 'submit', id: 'send' }, 'Send'), cancel, state)
      : h('p', { class: 'muted', id: 'chat-readonly' }, needs('user', 'send messages, answer questions or cancel runs'), ' · ', state),
    sendError);
  input.addEventListener('keydown', (e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); send(); } });

  function setActive(eid, on) {
    if (on) active.add(eid); else active.delete(eid);
    cancel.disabled = active.size === 0;
    state.textContent = active.size ? `running ${[...active].map(short).join(', ')}` : 'idle';
  }
  async function cancelActive() {
    for (const eid of [...active]) {
      try { await api('POST', `/executions/${encodeURIComponent(eid)}/cancel`); } catch (e) { clear(sendError, errorBox(e)); }
    }
  }
  async function send() {
    const content = input.value.trim();
    if (!content) return;
    clear(sendError);
    try {
      const r = await api('POST', `/sessions/${encodeURIComponent(sid)}/messages`, { content });
      input.value = '';
      setActive(r.data.execution_id, true);
    } catch (e) { clear(sendError, errorBox(e)); }
  }
  const scroll = () => { chat.scrollTop = chat.scrollHeight; };
  const runLink = (eid) => link(`executions/${encodeURIComponent(eid)}`, short(eid));

  function foldFor(eid) {
    let d = folds.get(eid);
    if (!d) {
      d = h('details', {}, h('summary', {}, 'run ', eid ? short(eid) : '', ': 0 info messages'));
      d.dataset.count = '0';
      folds.set(eid, d);
      chat.append(d);
    }
    return d;
  }
  function info(ev) {
    const d = foldFor(ev.execution_id);
    d.append(h('div', {}, `${when(ev.timestamp)} ${ev.content}`));
    d.dataset.count = String(Number(d.dataset.count) + 1);
    d.querySelector('summary').textContent = `run ${short(ev.execution_id)}: ${d.dataset.count} info messages`;
  }
  function question(ev) {
    // Answered (or ended) before this page loaded, or a role that may not answer: the question only.
    if (!canWrite || (ev.fromHistory && !paused.has(ev.execution_id))) {
      chat.append(h('div', { class: 'msg notification', 'data-execution': ev.execution_id }, h('span', { class: 'who' }, 'the agent asked'), ev.content));
      return;
    }
    const answer = h('input', { 'aria-label': 'Your answer', class: 'answer-input' });
    const err = h('div');
    const box = h('div', { class: 'msg notification', 'data-execution': ev.execution_id },
      h('span', { class: 'who' }, 'the agent asks'), ev.content,
      h('form', {
        class: 'inline', onsubmit: async (e) => {
          e.preventDefault();
          try {
            await api('POST', `/executions/${encodeURIComponent(ev.execution_id)}/input`, { content: answer.value });
            box.querySelector('form').remove();
            box.append(h('div', { class: 'muted' }, `answered: ${answer.value}`));
          } catch (x) { clear(err, errorBox(x)); }
        },
      }, answer, h('button', { type: 'submit' }, 'Answer'),
      h('button', {
        type: 'button', class: 'secondary', onclick: async () => {
          try { await api('POST', `/executions/${encodeURIComponent(ev.execution_id)}/resume`); box.querySelector('form').remove(); } catch (x) { clear(err, errorBox(x)); }
        },
      }, 'Continue without answer')), err);
    chat.append(box);
  }

  // A sub-agent the session's run delegated to (agent.step per model reply, agent.token while it
  // streams): one indented line per sub-agent run, under the delegate call, holding its newest text.
  function subAgent(ev) {
    let line = subAgents.get(ev.execution_id);
    if (!line) {
      const agent = ev.agent_id || (ev.metadata && ev.metadata.agent_id) || 'sub-agent';
      line = h('div', { class: 'inline-run sub-agent', 'data-execution': ev.execution_id },
        '⤷ ', h('code', {}, agent), ' ', runLink(ev.execution_id), ': ', h('span', { class: 'text' }));
      subAgents.set(ev.execution_id, line);
      chat.append(line);
    }
    const text = line.querySelector('.text');
    if (ev.event_type === 'agent.token') {
      if (line.dataset.stepped) { text.textContent = ''; delete line.dataset.stepped; }
      text.append(ev.content);
      return;
    }
    const calls = (ev.metadata && ev.metadata.tool_calls) || [];
    const names = calls.map((c) => (c.function && c.function.name) || c.name).filter(Boolean);
    text.textContent = ev.content || (names.length ? `calls ${names.join(', ')}` : '');
    line.dataset.stepped = '1'; // the next reply's tokens start afresh
  }

  // One event of the session (a stream frame, or a stored message in the same shape).
  function show(ev) {
    if (ev.parent_execution_id && (ev.event_type === 'agent.step' || ev.event_type === 'agent.token')) {
      subAgent(ev);
      return scroll();
    }
    if (ev.event_type === 'agent.token') {
      let b = streaming.get(ev.execution_id);
      if (!b) {
        b = h('div', { class: 'msg assistant streaming', 'data-execution': ev.execution_id }, h('span', { class: 'who' }, 'assistant (streaming)'), h('span', { class: 'text' }));
        streaming.set(ev.execution_id, b);
        chat.append(b);
      }
      b.querySelector('.text').append(ev.content);
      return scroll();
    }
    if (ev.message_id) {
      if (seen.has(ev.message_id)) return;
      seen.add(ev.message_id);
    }
    if (ev.parent_execution_id && ENDED.has(ev.event_type)) { // a tool or sub-agent the run called ended
      const md = ev.metadata || {};
      chat.append(h('div', { class: 'inline-run' }, '↳ ', md.kind || 'run', ' ', h('code', {}, md.executor || ''), ' ', badge(md.status),
        md.duration_ms !== undefined ? ` ${md.duration_ms} ms ` : ' ', runLink(ev.execution_id),
        md.error ? h('span', { class: 'error' }, ` ${md.error.message || md.error.code}`) : null));
      return scroll();
    }
    if (ev.role === 'user' || ev.role === 'assistant') {
      if (ev.role === 'assistant') {
        const b = streaming.get(ev.execution_id);
        if (b) { b.remove(); streaming.delete(ev.execution_id); }
      }
      chat.append(h('div', { class: `msg ${ev.role}`, 'data-execution': ev.execution_id || '' }, h('span', { class: 'who' }, ev.role, ' · ', when(ev.timestamp)), ev.content));
    } else if (ev.role === 'notification') {
      if (ev.event_type === 'execution.paused') question(ev); else chat.append(h('div', { class: 'msg notification' }, ev.content));
    } else if (ev.event_type === 'tool.called') {
      const md = ev.metadata || {};
      chat.append(h('div', { class: 'inline-run' }, '→ calls ', h('code', {}, md.tool || ''), ' ', h('code', {}, (typeof md.arguments === 'string' ? md.arguments : JSON.stringify(md.arguments ?? {})).slice(0, 200))));
    } else {
      info(ev);
    }
    if (!ev.parent_execution_id && ev.execution_id) {
      if (ev.event_type === 'execution.queued' || ev.event_type === 'execution.started') setActive(ev.execution_id, true);
      if (ENDED.has(ev.event_type)) {
        setActive(ev.execution_id, false);
        for (const f of chat.querySelectorAll(`.msg.notification[data-execution="${CSS.escape(ev.execution_id)}"] form`)) f.remove();
        if (ready) loadHead().catch(() => { /* the header keeps its last reading */ });
        const b = streaming.get(ev.execution_id);
        if (b) { b.classList.remove('streaming'); b.querySelector('.who').textContent = `assistant (${ev.event_type.slice(10)})`; streaming.delete(ev.execution_id); }
      }
    }
    scroll();
  }

  const es = stream(`/sessions/${encodeURIComponent(sid)}/events`);
  es.onmessage = (m) => {
    let ev;
    try { ev = JSON.parse(m.data); } catch { return; }
    if (!ev.event_type) return; // pings, stream.dropped
    if (ready) show(ev); else early.push(ev);
  };
  es.onopen = () => { state.textContent = active.size ? state.textContent : 'idle'; };
  es.onerror = () => { state.textContent = 'reconnecting…'; };

  // The session's header (status, tokens), read again whenever one of its runs ends.
  async function loadHead() {
    const s = await get(`/sessions/${encodeURIComponent(sid)}`);
    setTitle(`Session ${s.title}`);
    document.getElementById('session-title').textContent = s.title || short(sid);
    clear(head, badge(s.status), ' agent ', h('code', {}, s.agent_id), ' · tokens ', h('span', { id: 'session-tokens' }, String((s.token_usage && s.token_usage.total) || 0)),
      ' · ', link(`executions?session_id=${encodeURIComponent(sid)}`, 'executions'));
  }
  (async () => {
    try {
      await loadHead();
      const runs = await get(`/executions${qs({ session_id: sid, kind: 'agent', limit: 50 })}`);
      for (const r of runs.items || []) {
        if (['pending', 'running', 'paused'].includes(r.status)) setActive(r.id, true);
        if (r.status === 'paused') paused.add(r.id);
      }
      const msgs = await get(`/sessions/${encodeURIComponent(sid)}/messages?limit=1000`);
      for (const m of msgs.items || []) {
        show({ message_id: m.id, execution_id: m.agent_execution_id, parent_execution_id: null, role: m.role, content: m.content,
          metadata: m.metadata || {}, event_type: (m.metadata && m.metadata.event_type) || 'message.created', timestamp: m.created_at, fromHistory: true });
      }
    } catch (e) { head.append(errorBox(e)); }
    ready = true;
    early.splice(0).forEach(show);
    if (!active.size) state.textContent = 'idle';
  })();
  return () => es.close();
}

