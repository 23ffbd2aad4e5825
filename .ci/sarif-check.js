// Reads the SARIF log that `sarif-multitool validate --output LOG` wrote and fails on errors.
// The Multitool exits 0 even when a validated file breaks the schema, so its log is the
// verdict: every result of level "error" is printed as `file(line,col): RULE message` and
// makes this script exit 1; warnings and notes (style advice such as SARIF2005
// "provide informationUri") are counted and listed, not fatal.
// Usage: node .ci/sarif-check.js LOG EXPECTED_FILES
"use strict";
const fs = require("fs");

const [logPath, expectedFiles] = process.argv.slice(2);
const log = JSON.parse(fs.readFileSync(logPath, "utf8"));
const run = (log.runs || [])[0];
if (!run) {
  console.error(`ci: ${logPath} has no run: the Multitool did not finish`);
  process.exit(1);
}

const rules = (run.tool && run.tool.driver && run.tool.driver.rules) || [];
// A result's message is a rule message string with {0}, {1}… placeholders.
function text(result) {
  const m = result.message || {};
  if (m.text) return m.text;
  const rule = rules[result.ruleIndex] || rules.find((r) => r.id === result.ruleId) || {};
  const template = ((rule.messageStrings || {})[m.id] || {}).text || m.id || "";
  return template.replace(/\{(\d+)\}/g, (_, i) => (m.arguments || [])[Number(i)] ?? "");
}
function where(result) {
  const loc = ((result.locations || [])[0] || {}).physicalLocation || {};
  const uri = decodeURI(((loc.artifactLocation || {}).uri || "?").replace(/^file:\/\//, ""));
  const r = loc.region || {};
  return r.startLine ? `${uri}(${r.startLine},${r.startColumn || 1})` : uri;
}

let failed = false;
for (const inv of run.invocations || []) {
  if (inv.executionSuccessful === false) {
    console.error("ci: the Multitool reports an unsuccessful execution");
    failed = true;
  }
  for (const n of inv.toolExecutionNotifications || []) {
    if (n.level === "error") {
      console.error(`ci: Multitool error: ${(n.message || {}).text || JSON.stringify(n)}`);
      failed = true;
    }
  }
}

const counts = { error: 0, warning: 0, note: 0, none: 0 };
const advice = new Map();
for (const result of run.results || []) {
  const level = result.level || "warning"; // SARIF's default level
  counts[level] = (counts[level] || 0) + 1;
  if (level === "error") {
    console.error(`${where(result)}: error ${result.ruleId}: ${text(result)}`);
    failed = true;
  } else {
    advice.set(result.ruleId, (advice.get(result.ruleId) || 0) + 1);
  }
}

const summary = [...advice].map(([rule, n]) => `${rule} ×${n}`).join(", ");
console.log(
  `ci: sarif-multitool validated ${expectedFiles} file(s): ${counts.error} error(s), ` +
    `${counts.warning} warning(s), ${counts.note} note(s)${summary ? ` (${summary})` : ""}`
);
process.exit(failed ? 1 : 0);
