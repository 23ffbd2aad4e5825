// Validate GraphQL documents against GitHub's published schema (npm @octokit/graphql-schema).
// Usage: node validate.mjs <dir of @octokit/graphql-schema> < requests.json
// stdin: a JSON array of request bodies {query, variables}. Prints a JSON array with one
// array of error messages per request (empty: valid); exit 0 unless the input is unusable.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const dir = process.argv[2];
const require = createRequire(join(dir, "package.json"));
const { buildSchema, parse, validate } = require("graphql");
const { getVariableValues } = require("graphql/execution/values");
// The published SDL repeats a few field definitions (15.26.1): the document checks do not
// depend on them, so the SDL itself is not re-validated.
const schema = buildSchema(readFileSync(join(dir, "schema.graphql"), "utf8"), {
  assumeValidSDL: true,
});
const requests = JSON.parse(readFileSync(0, "utf8"));
const out = requests.map((r) => {
  let doc;
  try {
    doc = parse(r.query);
  } catch (e) {
    return [String(e.message)];
  }
  const errors = validate(schema, doc).map((e) => e.message);
  if (errors.length) return errors;
  for (const op of doc.definitions.filter((d) => d.kind === "OperationDefinition")) {
    const defs = op.variableDefinitions || [];
    const declared = new Set(defs.map((d) => d.variable.name.value));
    for (const k of Object.keys(r.variables || {})) {
      if (!declared.has(k)) errors.push(`variable $${k} is not declared`);
    }
    const coerced = getVariableValues(schema, defs, r.variables || {});
    for (const e of coerced.errors || []) errors.push(e.message);
  }
  return errors;
});
process.stdout.write(JSON.stringify(out));
