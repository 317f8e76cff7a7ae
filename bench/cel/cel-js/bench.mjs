// The baseline of bench/cel: the same conditions (../conditions.json) on the same data
// (../data.json) in @marcbachmann/cel-js, each parsed once and evaluated in a timed loop.
// Prints one JSON line per condition: {"name", "ns_per_eval", "iterations"}.
import {parse} from '@marcbachmann/cel-js'
import {readFileSync} from 'node:fs'

const here = new URL('..', import.meta.url)
const data = JSON.parse(readFileSync(new URL('data.json', here)))
const conditions = JSON.parse(readFileSync(new URL('conditions.json', here)))
const seconds = Number(process.env.CEL_BENCH_SECONDS || 2)

for (const {name, expr} of conditions) {
  const evaluate = parse(expr)
  if (evaluate(data) !== true) throw new Error(`${name}: the condition should hold on the data`)
  for (let i = 0; i < 20000; i++) evaluate(data)  // warm up the JIT
  let iterations = 0
  const start = process.hrtime.bigint()
  const deadline = start + BigInt(Math.round(seconds * 1e9))
  let now = start
  while (now < deadline) {
    for (let i = 0; i < 1000; i++) evaluate(data)
    iterations += 1000
    now = process.hrtime.bigint()
  }
  console.log(JSON.stringify({name, ns_per_eval: Number(now - start) / iterations, iterations}))
}
