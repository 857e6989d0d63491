#!/usr/bin/env node
// Independent decode of a fieldproof recording, the way Foxglove does it: @mcap/core's indexed
// reader for the records, JSON.parse for "json" channels, and for "protobuf" channels the schema's
// FileDescriptorSet turned into a protobufjs Root (@mcap/support's protobufFromBinaryDescriptor)
// and the message decoded with the type the schema names. Prints one JSON document:
//
//   { "channels": [{topic, message_encoding, schema_name, schema_encoding, schema_is_json}],
//     "topics": {"/t": {"count": n, "messages": [decoded...]}},      // json and protobuf only
//     "metadata": [{name, metadata}], "errors": ["..."] }
//
//   node tests/js/recorder_check.mjs FILE.mcap
//
// Exit 0 when every message decoded; 1 with the errors listed otherwise.
import { open } from "node:fs/promises";

import { McapIndexedReader } from "@mcap/core";
import { FileHandleReadable } from "@mcap/nodejs";
import { loadDecompressHandlers, protobufFromBinaryDescriptor } from "@mcap/support";

const text = new TextDecoder();

function toJson(value) {
  return JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? v.toString() : v), 2);
}

async function main() {
  const path = process.argv[2];
  if (!path) {
    process.stderr.write("usage: node recorder_check.mjs FILE.mcap\n");
    process.exit(2);
  }
  const out = { file: path, channels: [], topics: {}, metadata: [], errors: [] };
  const handle = await open(path, "r");
  try {
    const reader = await McapIndexedReader.Initialize({
      readable: new FileHandleReadable(handle),
      decompressHandlers: await loadDecompressHandlers(),
    });
    const decoders = new Map();  // channel id -> (bytes) => value, or null (count only)
    for (const c of reader.channelsById.values()) {
      const schema = reader.schemasById.get(c.schemaId);
      let schemaIsJson = null;
      if (schema?.encoding === "jsonschema") {
        try {
          JSON.parse(text.decode(schema.data));
          schemaIsJson = true;
        } catch {
          schemaIsJson = false;
        }
      }
      out.channels.push({
        topic: c.topic,
        message_encoding: c.messageEncoding,
        schema_name: schema?.name ?? "",
        schema_encoding: schema?.encoding ?? "",
        schema_is_json: schemaIsJson,
      });
      let decode = null;
      if (c.messageEncoding === "json") {
        decode = (bytes) => JSON.parse(text.decode(bytes));
      } else if (c.messageEncoding === "protobuf" && schema?.encoding === "protobuf") {
        try {
          const type = protobufFromBinaryDescriptor(schema.data).lookupType(schema.name);
          decode = (bytes) => type.toObject(type.decode(bytes), { longs: String, defaults: true });
        } catch (err) {
          out.errors.push(`${c.topic}: schema ${schema.name}: ${err?.message ?? err}`);
        }
      }
      decoders.set(c.id, decode);
      out.topics[c.topic] = { count: 0, messages: [] };
    }
    for await (const m of reader.readMessages()) {
      const topic = reader.channelsById.get(m.channelId).topic;
      const t = out.topics[topic];
      t.count += 1;
      const decode = decoders.get(m.channelId);
      if (!decode) continue;
      try {
        t.messages.push(decode(m.data));
      } catch (err) {
        out.errors.push(`${topic} seq ${m.sequence}: ${err?.message ?? err}`);
      }
    }
    for await (const md of reader.readMetadata()) {
      out.metadata.push({ name: md.name, metadata: Object.fromEntries(md.metadata) });
    }
  } catch (err) {
    out.errors.push(String(err?.message ?? err));
  } finally {
    await handle.close();
  }
  process.stdout.write(toJson(out) + "\n");
  process.exit(out.errors.length > 0 ? 1 : 0);
}

await main();
