#!/usr/bin/env node
// Independent check of an MCAP file with the official TypeScript reader (@mcap/core): prints one
// JSON document describing what the indexed reader (McapIndexedReader over the file) and the
// streaming reader (McapStreamReader over the whole file, CRCs validated) see, so fieldproof's
// tests compare it with what the project's own writer wrote.
//
//   node tests/js/mcap_check.mjs FILE.mcap
//
// Exit 0 with the JSON on stdout; exit 1 with {"error": "..."} when either reader fails.
import { open, readFile } from "node:fs/promises";
import zlib from "node:zlib";

import { McapIndexedReader, McapStreamReader } from "@mcap/core";
import { FileHandleReadable } from "@mcap/nodejs";
import { loadDecompressHandlers } from "@mcap/support";

const text = new TextDecoder();

function toJson(value) {
  return JSON.stringify(
    value,
    (_key, v) => (typeof v === "bigint" ? v.toString() : v instanceof Map ? Object.fromEntries(v) : v),
    2,
  );
}

function topicSummary(byTopic, topic, logTime) {
  let t = byTopic[topic];
  if (!t) {
    t = byTopic[topic] = { count: 0, first_log_time: logTime, last_log_time: logTime };
  }
  t.count += 1;
  if (logTime < t.first_log_time) t.first_log_time = logTime;
  if (logTime > t.last_log_time) t.last_log_time = logTime;
}

async function readIndexed(path, decompressHandlers) {
  const handle = await open(path, "r");
  try {
    const reader = await McapIndexedReader.Initialize({
      readable: new FileHandleReadable(handle),
      decompressHandlers,
    });
    const out = {
      header: { profile: reader.header.profile, library: reader.header.library },
      schemas: [...reader.schemasById.values()].map((s) => ({
        id: s.id,
        name: s.name,
        encoding: s.encoding,
        data: text.decode(s.data),
      })),
      channels: [...reader.channelsById.values()].map((c) => ({
        id: c.id,
        schema_id: c.schemaId,
        topic: c.topic,
        message_encoding: c.messageEncoding,
        metadata: Object.fromEntries(c.metadata),
      })),
      statistics: reader.statistics
        ? {
            message_count: reader.statistics.messageCount,
            schema_count: reader.statistics.schemaCount,
            channel_count: reader.statistics.channelCount,
            attachment_count: reader.statistics.attachmentCount,
            metadata_count: reader.statistics.metadataCount,
            chunk_count: reader.statistics.chunkCount,
            message_start_time: reader.statistics.messageStartTime,
            message_end_time: reader.statistics.messageEndTime,
            channel_message_counts: Object.fromEntries(reader.statistics.channelMessageCounts),
          }
        : null,
      chunk_index_count: reader.chunkIndexes.length,
      summary_offset_opcodes: [...reader.summaryOffsetsByOpcode.keys()].sort((a, b) => a - b),
      data_section_crc: reader.dataSectionCrc ?? 0,
      data_end_offset: reader.dataEndOffset,
      topics: {},
      message_count: 0,
      first_log_time: null,
      last_log_time: null,
      in_log_time_order: true,
      payload_bytes: 0,
      metadata: [],
      attachments: [],
    };
    let prev;
    for await (const m of reader.readMessages()) {
      const topic = reader.channelsById.get(m.channelId)?.topic ?? `?${m.channelId}`;
      topicSummary(out.topics, topic, m.logTime);
      out.message_count += 1;
      out.payload_bytes += m.data.byteLength;
      if (out.first_log_time === null) out.first_log_time = m.logTime;
      out.last_log_time = m.logTime;
      if (prev !== undefined && m.logTime < prev) out.in_log_time_order = false;
      prev = m.logTime;
    }
    for await (const md of reader.readMetadata()) {
      out.metadata.push({ name: md.name, metadata: Object.fromEntries(md.metadata) });
    }
    for await (const a of reader.readAttachments({ validateCrcs: true })) {
      out.attachments.push({
        name: a.name,
        media_type: a.mediaType,
        log_time: a.logTime,
        create_time: a.createTime,
        data: text.decode(a.data),
      });
    }
    return out;
  } finally {
    await handle.close();
  }
}

async function readStream(path, decompressHandlers) {
  const bytes = await readFile(path);
  const reader = new McapStreamReader({ decompressHandlers, validateCrcs: true });
  reader.append(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  const out = { topics: {}, message_count: 0, record_counts: {}, data_section_crc_ok: null };
  const channels = new Map();
  let storedDataCrc;
  for (let record; (record = reader.nextRecord()); ) {
    out.record_counts[record.type] = (out.record_counts[record.type] ?? 0) + 1;
    if (record.type === "Channel") channels.set(record.id, record.topic);
    if (record.type === "Message") {
      out.message_count += 1;
      topicSummary(out.topics, channels.get(record.channelId) ?? `?${record.channelId}`, record.logTime);
    }
    if (record.type === "DataEnd" && record.dataSectionCrc !== 0 && typeof zlib.crc32 === "function") {
      storedDataCrc = record.dataSectionCrc;
    }
  }
  out.done = reader.done();
  // The data section CRC covers every byte before the Data End record; check it independently.
  if (storedDataCrc !== undefined) {
    const dataEndAt = await dataEndOffset(path);
    if (dataEndAt !== undefined) {
      out.data_section_crc_ok = zlib.crc32(bytes.subarray(0, Number(dataEndAt))) === storedDataCrc;
    }
  }
  return out;
}

async function dataEndOffset(path) {
  const handle = await open(path, "r");
  try {
    const reader = await McapIndexedReader.Initialize({ readable: new FileHandleReadable(handle) });
    return reader.dataEndOffset;
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}

async function main() {
  const path = process.argv[2];
  if (!path) {
    process.stderr.write("usage: node mcap_check.mjs FILE.mcap\n");
    process.exit(2);
  }
  const decompressHandlers = await loadDecompressHandlers();
  const result = { file: path };
  try {
    result.indexed = await readIndexed(path, decompressHandlers);
  } catch (err) {
    result.indexed_error = String(err?.message ?? err);
  }
  try {
    result.stream = await readStream(path, decompressHandlers);
  } catch (err) {
    result.stream_error = String(err?.message ?? err);
  }
  process.stdout.write(toJson(result) + "\n");
  process.exit(result.indexed_error || result.stream_error ? 1 : 0);
}

await main();
