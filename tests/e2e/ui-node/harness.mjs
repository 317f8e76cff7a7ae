// What the dashboard's browser tests share: the environment, HTTP calls to the server, a headless
// chromium page, named steps that record failures (with a screenshot), axe checks, screenshots,
// and waiting on a condition with a deadline (never a fixed sleep).
//
//   CAIRN_URL         the server, "http://127.0.0.1:<port>"
//   CAIRN_UI_SHOTS    where to write screenshots (docs/ui to refresh the README's)
//   CHROMIUM          the browser (default /usr/bin/chromium)
import { chromium } from 'playwright-core';
import AxeBuilder from '@axe-core/playwright';
import fs from 'node:fs';
import path from 'node:path';

export const BASE = process.env.CAIRN_URL;
export const SHOTS = process.env.CAIRN_UI_SHOTS;
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
export const WAIT = 30000; // long enough for a loaded ASan machine

export function requireEnv(...names) {
  const missing = ['CAIRN_URL', 'CAIRN_UI_SHOTS', ...names].filter((n) => !process.env[n]);
  if (missing.length) {
    console.error(`${missing.join(', ')} required`);
    process.exit(2);
  }
  fs.mkdirSync(SHOTS, { recursive: true });
}

export function check(cond, what) {
  if (!cond) throw new Error(`check failed: ${what}`);
}

// One request to the server: {status, data (JSON when it parses), headers}.
export async function http(method, p, body, headers = {}) {
  const res = await fetch(BASE + p, {
    method, headers: { ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let data = text;
  try { data = JSON.parse(text); } catch { /* not JSON */ }
  return { status: res.status, data, headers: res.headers };
}

// Resolves what `probe()` resolves once it is truthy, asking every 50 ms; throws naming `what`
// after `timeout`. For server state with no event to wait on (a dead letter, a paused run).
export async function until(probe, what, timeout = WAIT) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// A headless chromium with one page, and the step/axe/shot/go helpers bound to it.
export async function openBrowser() {
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  const consoleErrors = [];
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error' && !/Failed to load resource/.test(m.text())) consoleErrors.push(m.text()); });
  const failures = [];
  return {
    browser, page, consoleErrors,
    // Runs one named step; a failure is recorded (with a screenshot) and the next step runs.
    async step(name, fn) {
      try {
        await fn();
        console.log(`ok ${name}`);
      } catch (e) {
        failures.push(name);
        console.log(`FAILED ${name}: ${e && e.stack ? e.stack : e}`);
        try { await page.screenshot({ path: path.join(SHOTS, `failed-${name.replace(/\W+/g, '-')}.png`), fullPage: true }); } catch { /* best effort */ }
      }
    },
    // Zero serious or critical axe violations on what the page shows now.
    async axe(name) {
      const result = await new AxeBuilder({ page }).analyze();
      const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      check(bad.length === 0, `${name}: accessibility violations ${JSON.stringify(bad.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map((n) => n.target) })))}`);
    },
    async shot(name) {
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
    },
    async go(hash) {
      await page.goto(`${BASE}/ui${hash}`);
      await page.waitForSelector('main .page', { timeout: WAIT });
    },
    // Closes the browser and exits: 1 if a step failed.
    async finish() {
      await browser.close();
      if (failures.length) {
        console.log(`${failures.length} failed: ${failures.join('; ')}`);
        process.exit(1);
      }
      console.log('all passed');
    },
  };
}
