#!/usr/bin/env node
// Every message of a recording's JSON side channels (/fieldproof/events, assertions, metrics,
// resources, kpis: "json" channels with a "jsonschema" schema) validated against the schema its
// channel carries, with an independent JSON Schema validator (ajv, draft 2020-12). Prints one JSON
// document:
//
//   { "channels": {"/fieldproof/kpis": {"count": n, "invalid": k, "errors": [first few]}},
//     "errors": ["..."] }
//
//   node tests/js/side_channels_check.mjs FILE.mcap
//
// Exit 0 when every message is valid; 1 otherwise (or when a schema does not compile).
import { open } from "node:fs/promises";

import { McapIndexedReader } from "@mcap/core";
import { FileHandleReadable } from "@mcap/nodejs";
import { loadDecompressHandlers } from "@mcap/support";
import Ajv2020 from "ajv/dist/2020.js";

const text = new TextDecoder();

async function main() {
  const path = process.argv[2];
  if (!path) {
    process.stderr.write("usage: node side_channels_check.mjs FILE.mcap\n");
    process.exit(2);
  }
  const out = { file: path, channels: {}, errors: [] };
  const handle = await open(path, "r");
  try {
    const reader = await McapIndexedReader.Initialize({
      readable: new FileHandleReadable(handle),
      decompressHandlers: await loadDecompressHandlers(),
    });
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    const validators = new Map();  // channel id -> validate function
    for (const c of reader.channelsById.values()) {
      const schema = reader.schemasById.get(c.schemaId);
      if (c.messageEncoding !== "json" || !schema || schema.encoding !== "jsonschema") continue;
      try {
        validators.set(c.id, { topic: c.topic, validate: ajv.compile(JSON.parse(text.decode(schema.data))) });
        out.channels[c.topic] = { count: 0, invalid: 0, errors: [] };
      } catch (e) {
        out.errors.push(`${c.topic}: the schema does not compile: ${e.message}`);
      }
    }
    for await (const m of reader.readMessages()) {
      const v = validators.get(m.channelId);
      if (!v) continue;
      const entry = out.channels[v.topic];
      entry.count += 1;
      let value;
      try {
        value = JSON.parse(text.decode(m.data));
      } catch (e) {
        entry.invalid += 1;
        if (entry.errors.length < 5) entry.errors.push(`not JSON: ${e.message}`);
        continue;
      }
      if (!v.validate(value)) {
        entry.invalid += 1;
        if (entry.errors.length < 5) {
          entry.errors.push({ errors: v.validate.errors, message: value });
        }
      }
    }
  } catch (e) {
    out.errors.push(String(e && e.stack ? e.stack : e));
  } finally {
    await handle.close();
  }
  const bad = out.errors.length > 0 || Object.values(out.channels).some((c) => c.invalid > 0);
  process.stdout.write(JSON.stringify(out, null, 2) + "\n");
  process.exit(bad ? 1 : 0);
}

main();
