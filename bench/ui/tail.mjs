#!/usr/bin/env node
// The dashboard's live tail under load (bench/ui/run.sh): the Events page (/ui#/events) in headless
// chromium against a bare SSE client in Node (the baseline: fetch + a frame counter, no rendering),
// both following the same selector while records are written.
//
//   node tail.mjs --port P --rates "1000 2000" --seconds 10 --replay 20000 --chromium /usr/bin/chromium
//
// live R   records are written at R/s (paced; up to 64 requests in flight) for --seconds; both
//          clients follow `any_tags=<tag of the run>`. Reported: the rate reached, what each client
//          received, each one's lag behind the last write, and the page's longest gap between two
//          animation frames (a frozen page shows as a long gap) and frames over 100 ms.
// control  first, at the first rate: the same writes, but the page follows a tag nobody writes: its
//          frame gaps then come from the machine (the server, the writer, other load), not from
//          events — the baseline of the live phases' frame gaps.
// replay   --replay N records written first, then both clients read them from their seq (as fast
//          as the server sends): each one's events/s, and their ratio (page / bare client).
// One JSON line per phase on stdout; progress on stderr.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
// playwright-core comes from the browser tests' pinned packages (scripts/install-deps).
const require = createRequire(path.join(here, '../../tests/e2e/ui-node/package.json'));
const { chromium } = require('playwright-core');

const args = { port: 0, rates: '1000 2000 4000', seconds: 10, replay: 20000, chromium: '/usr/bin/chromium', timeoutMs: 120000 };
for (let i = 2; i < process.argv.length; i += 2) {
  const k = process.argv[i].replace(/^--/, '').replace(/-(\w)/g, (_, c) => c.toUpperCase());
  if (!(k in args)) { console.error(`tail.mjs: unknown option ${process.argv[i]}`); process.exit(2); }
  args[k] = typeof args[k] === 'number' ? Number(process.argv[i + 1]) : process.argv[i + 1];
}
if (!args.port) { console.error('tail.mjs: --port is required'); process.exit(2); }
const BASE = `http://127.0.0.1:${args.port}`;
const log = (m) => process.stderr.write(`[tail.mjs] ${m}\n`);

async function post(tag, i) {
  const res = await fetch(`${BASE}/breadcrumbs`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ title: `bench ${i}`, tags: [tag], context: { i, pad: 'x'.repeat(200) } }),
  });
  await res.arrayBuffer();
  if (res.status !== 201) throw new Error(`POST /breadcrumbs → ${res.status}`);
}
// Writes `n` records at `rate`/s (0: as fast as possible), at most 64 in flight. Returns [start, end] ms.
async function write(tag, n, rate) {
  const t0 = Date.now();
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      if (rate > 0) {
        const due = t0 + (i * 1000) / rate;
        const wait = due - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
      await post(tag, i);
    }
  };
  await Promise.all(Array.from({ length: 64 }, worker));
  return [t0, Date.now()];
}
async function lastSeq() {
  const text = await (await fetch(`${BASE}/metrics`)).text();
  return Number(text.split('\n').find((l) => l.startsWith('cairn_bus_last_seq')).split(' ').pop());
}

// The baseline: GET /events/stream read with fetch, frames counted (no rendering).
function bareClient(query) {
  const c = { received: 0, lastAt: 0, firstAt: 0, abort: new AbortController(), open: null };
  c.open = (async () => {
    const res = await fetch(`${BASE}/events/stream?${query}`, { signal: c.abort.signal });
    if (res.status !== 200) throw new Error(`stream → ${res.status}`);
    const reader = res.body.getReader();
    const dec = new TextDecoder();
    let buf = '';
    c.ready = true;
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ done: true }));
      if (done) return;
      buf += dec.decode(value, { stream: true });
      let cut;
      while ((cut = buf.indexOf('\n\n')) >= 0) {
        const frame = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        const data = frame.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5)).join('\n');
        if (!data) continue;
        const d = JSON.parse(data);
        if (d.seq === undefined) continue; // pings
        c.received++;
        c.lastAt = Date.now();
        if (!c.firstAt) c.firstAt = c.lastAt;
      }
    }
  })().catch((e) => { if (e.name !== 'AbortError') log(`bare client: ${e.message}`); });
  return c;
}
async function waitFor(cond, ms) {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

const browser = await chromium.launch({ executablePath: args.chromium, headless: true, args: ['--no-sandbox'] });
const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
// Opens the tail on `query` and starts sampling frame gaps; resolves when the stream is open.
async function openPage(query) {
  await page.goto(`${BASE}/ui#/events?${query}`);
  await page.waitForSelector('#tail-start');
  await page.evaluate(() => {
    window.gaps = { max: 0, long: 0, last: performance.now(), on: true };
    const tick = (t) => {
      const g = t - window.gaps.last;
      window.gaps.max = Math.max(window.gaps.max, g);
      if (g > 100) window.gaps.long++;
      window.gaps.last = t;
      if (window.gaps.on) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
    window.lastAt = 0;
  });
  const clicked = Date.now();
  await page.click('#tail-start');
  await page.waitForSelector('[role=status] .ok', { timeout: 30000 });
  return clicked;
}
// The page's count, and when it last grew (sampled from Node every 20 ms while waiting).
const pageState = () => page.evaluate(() => ({ received: window.cairnTail.received, maxGap: window.gaps.max, long: window.gaps.long }));

let run = 0;
{
  const rate = Number(args.rates.split(/\s+/).filter(Boolean)[0]);
  const n = rate * args.seconds;
  await openPage(`any_tags=tailbench-${process.pid}-nobody`);
  log(`control ${rate}/s: ${n} records the page does not follow`);
  const [t0, t1] = await write(`tailbench-${process.pid}-control`, n, rate);
  const s = await pageState();
  console.log(JSON.stringify({
    phase: 'control', rate_target: rate, written: n, write_rate: Math.round((n * 1000) / (t1 - t0)),
    page: { received: s.received, max_frame_gap_ms: Math.round(s.maxGap), frames_over_100ms: s.long },
  }));
}
for (const rate of args.rates.split(/\s+/).filter(Boolean).map(Number)) {
  const tag = `tailbench-${process.pid}-${++run}`;
  const n = rate * args.seconds;
  await openPage(`any_tags=${tag}`);
  const bare = bareClient(`any_tags=${tag}`);
  await waitFor(() => bare.ready, 30000);
  log(`live ${rate}/s: ${n} records`);
  const [t0, t1] = await write(tag, n, rate);
  let pageLastAt = 0;
  let seen = -1;
  const done = await waitFor(async () => {
    const s = await pageState();
    if (s.received !== seen) { seen = s.received; pageLastAt = Date.now(); }
    return s.received >= n && bare.received >= n;
  }, args.timeoutMs);
  const s = await pageState();
  bare.abort.abort();
  console.log(JSON.stringify({
    phase: 'live', rate_target: rate, written: n, write_rate: Math.round((n * 1000) / (t1 - t0)), complete: done,
    page: { received: s.received, lag_ms: Math.max(0, pageLastAt - t1), max_frame_gap_ms: Math.round(s.maxGap), frames_over_100ms: s.long },
    bare: { received: bare.received, lag_ms: Math.max(0, bare.lastAt - t1) },
  }));
}

if (args.replay > 0) {
  const tag = `tailbench-${process.pid}-replay`;
  const since = await lastSeq();
  log(`replay: writing ${args.replay} records`);
  await write(tag, args.replay, 0);
  const query = `any_tags=${tag}&since=${since}`;
  const bare = bareClient(query);
  const b0 = Date.now();
  await waitFor(() => bare.received >= args.replay, args.timeoutMs);
  const bareSeconds = (bare.lastAt - b0) / 1000;
  bare.abort.abort();
  const p0 = await openPage(query);
  const complete = await waitFor(async () => (await pageState()).received >= args.replay, args.timeoutMs);
  const pageSeconds = (Date.now() - p0) / 1000;
  const s = await pageState();
  const pageRate = Math.round(s.received / pageSeconds);
  const bareRate = Math.round(bare.received / bareSeconds);
  console.log(JSON.stringify({
    phase: 'replay', events: args.replay, complete,
    page: { received: s.received, events_per_s: pageRate, max_frame_gap_ms: Math.round(s.maxGap), frames_over_100ms: s.long },
    bare: { received: bare.received, events_per_s: bareRate },
    ratio: Number((pageRate / bareRate).toFixed(2)),
  }));
}
await browser.close();
