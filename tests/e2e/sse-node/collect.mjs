// Usage: node collect.mjs <url> <n> [timeout_ms]
//
// Connects to <url> with the `eventsource` package's EventSource, collects <n> messages (ping
// frames included: they are messages too) and prints each as one JSON line
// {"lastEventId": "...", "data": <parsed data or the raw string>}. Prints "open" on stderr once the
// stream is open (the test waits for it before writing). Exits 0 after <n> messages; 1 on a
// connection error or when <timeout_ms> (default 20000) passes first; 2 on bad usage.
import { EventSource } from 'eventsource';

const [url, countText, timeoutText] = process.argv.slice(2);
const want = Number.parseInt(countText ?? '', 10);
if (!url || !Number.isInteger(want) || want < 1) {
  process.stderr.write('usage: node collect.mjs <url> <n> [timeout_ms]\n');
  process.exit(2);
}
const timeoutMs = timeoutText ? Number.parseInt(timeoutText, 10) : 20000;

let got = 0;
const es = new EventSource(url);
const timer = setTimeout(() => {
  process.stderr.write(`timeout: ${got} of ${want} messages after ${timeoutMs} ms\n`);
  es.close();
  process.exit(1);
}, timeoutMs);

es.onopen = () => process.stderr.write('open\n');
es.onerror = (err) => {
  process.stderr.write(`error: ${err?.message ?? 'unknown'} (code ${err?.code ?? '-'})\n`);
  es.close();
  clearTimeout(timer);
  process.exit(1);
};
es.onmessage = (msg) => {
  let data;
  try {
    data = JSON.parse(msg.data);
  } catch {
    data = msg.data;
  }
  process.stdout.write(JSON.stringify({ lastEventId: msg.lastEventId, data }) + '\n');
  if (++got === want) {
    es.close();
    clearTimeout(timer);
    process.exit(0);
  }
};
