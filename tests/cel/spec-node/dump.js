// Dumps the cel-spec conformance tests shipped by @bufbuild/cel-spec as one JSON array of
// {suite, section, name, ...SimpleTest fields} on stdout (read by src/cel/conformance_test.cpp).
"use strict";
const path = require("path");
const dir = path.join(__dirname, "node_modules", "@bufbuild", "cel-spec", "dist", "cjs", "testdata");
const { tests } = require(path.join(dir, "conformance.js"));
const out = [];
function walk(node, suite, section) {
  for (const t of node.tests || []) out.push({ suite, section, ...t.original });
  for (const child of node.suites || []) walk(child, suite, child.name);
}
for (const suite of tests.suites) walk(suite, suite.name, "");
if (out.length === 0) {
  process.stderr.write("dump.js: no conformance tests found\n");
  process.exit(1);
}
process.stdout.write(JSON.stringify(out));
