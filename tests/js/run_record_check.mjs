// Validates run.json files against the run record's JSON Schema (`fieldproof schema --run`) with
// an independent validator (ajv, draft 2020-12).
//   node run_record_check.mjs SCHEMA.json RUN.json [RUN.json ...]
// Prints {"files": {path: {"valid": bool, "errors": [...]}}}; exit 0 when every file is valid.
import { readFile } from "node:fs/promises";
import Ajv2020 from "ajv/dist/2020.js";

const [schemaPath, ...runs] = process.argv.slice(2);
const ajv = new Ajv2020({ allErrors: true, strict: false });
const validate = ajv.compile(JSON.parse(await readFile(schemaPath, "utf8")));
const out = { files: {} };
let ok = runs.length > 0;
for (const p of runs) {
  let valid = false;
  let errors = [];
  try {
    valid = validate(JSON.parse(await readFile(p, "utf8")));
    errors = valid ? [] : validate.errors.map((e) => `${e.instancePath || "/"} ${e.message}`);
  } catch (e) {
    errors = [String(e)];
  }
  out.files[p] = { valid, errors };
  ok = ok && valid;
}
console.log(JSON.stringify(out));
process.exit(ok ? 0 : 1);
