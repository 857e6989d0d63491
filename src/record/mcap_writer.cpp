#include "fieldproof/record/mcap_writer.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <utility>

#include "record/compression.hpp"
#include "record/mcap_wire.hpp"

namespace fieldproof::record {

namespace {

constexpr uint64_t kMaxChunkSize = uint64_t{2} << 30;

Status invalid(std::string msg) { return {StatusCode::kInvalidArgument, std::move(msg)}; }

class FileSink final : public McapSink {
 public:
  FileSink(std::FILE* f, std::string path) : f_(f), path_(std::move(path)) {
    // A large stdio buffer turns many small record writes into few system calls.
    std::setvbuf(f_, nullptr, _IOFBF, size_t{1} << 20);
  }
  ~FileSink() override {
    if (f_ != nullptr) std::fclose(f_);
  }
  Status write(const uint8_t* data, size_t size) override {
    if (f_ == nullptr) return {StatusCode::kFailedPrecondition, path_ + ": closed"};
    if (size > 0 && std::fwrite(data, 1, size, f_) != size) return error("write");
    return {};
  }
  Status flush() override {
    if (f_ == nullptr) return {};
    if (std::fflush(f_) != 0) return error("flush");
    return {};
  }
  Status close() override {
    if (f_ == nullptr) return {};
    int rc = std::fclose(f_);
    f_ = nullptr;
    if (rc != 0) return error("close");
    return {};
  }

 private:
  Status error(const char* what) {
    return {StatusCode::kIoError, path_ + ": " + what + " failed: " + std::strerror(errno)};
  }
  std::FILE* f_;
  std::string path_;
};

class OstreamSink final : public McapSink {
 public:
  explicit OstreamSink(std::ostream& out) : out_(out) {}
  Status write(const uint8_t* data, size_t size) override {
    out_.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!out_) return {StatusCode::kIoError, "stream write failed"};
    return {};
  }
  Status flush() override {
    out_.flush();
    if (!out_) return {StatusCode::kIoError, "stream flush failed"};
    return {};
  }

 private:
  std::ostream& out_;
};

// The summary section's records, one group each (the MCAP specification's order).
void put_schemas(wire::Appender& sa, const std::vector<Schema>& schemas) {
  for (const Schema& s : schemas) {
    size_t r = sa.begin_record(Opcode::kSchema);
    sa.u16(s.id);
    sa.str(s.name);
    sa.str(s.encoding);
    sa.str(s.data);
    sa.end_record(r);
  }
}

void put_channels(wire::Appender& sa, const std::vector<Channel>& channels) {
  for (const Channel& c : channels) {
    size_t r = sa.begin_record(Opcode::kChannel);
    sa.u16(c.id);
    sa.u16(c.schema_id);
    sa.str(c.topic);
    sa.str(c.message_encoding);
    sa.string_map(c.metadata);
    sa.end_record(r);
  }
}

// Entries: the writer's own (private) chunk index entries.
template <class Entries>
void put_chunk_indexes(wire::Appender& sa, const Entries& entries, std::string_view compression) {
  for (const auto& c : entries) {
    size_t r = sa.begin_record(Opcode::kChunkIndex);
    sa.u64(static_cast<uint64_t>(c.start_ns));
    sa.u64(static_cast<uint64_t>(c.end_ns));
    sa.u64(c.chunk_offset);
    sa.u64(c.chunk_length);
    size_t m = sa.begin_length32();
    for (const auto& [id, off] : c.message_index_offsets) {
      sa.u16(id);
      sa.u64(off);
    }
    sa.end_length32(m);
    sa.u64(c.message_index_length);
    sa.str(compression);
    sa.u64(c.compressed_size);
    sa.u64(c.uncompressed_size);
    sa.end_record(r);
  }
}

void put_attachment_indexes(wire::Appender& sa, const std::vector<AttachmentInfo>& infos) {
  for (const AttachmentInfo& i : infos) {
    size_t r = sa.begin_record(Opcode::kAttachmentIndex);
    sa.u64(i.offset);
    sa.u64(i.length);
    sa.u64(static_cast<uint64_t>(i.log_time_ns));
    sa.u64(static_cast<uint64_t>(i.create_time_ns));
    sa.u64(i.data_size);
    sa.str(i.name);
    sa.str(i.content_type);
    sa.end_record(r);
  }
}

// Entries: the writer's own (private) metadata index entries.
template <class Entries>
void put_metadata_indexes(wire::Appender& sa, const Entries& entries) {
  for (const auto& i : entries) {
    size_t r = sa.begin_record(Opcode::kMetadataIndex);
    sa.u64(i.offset);
    sa.u64(i.length);
    sa.str(i.name);
    sa.end_record(r);
  }
}

}  // namespace

Result<std::unique_ptr<McapSink>> open_file_sink(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    return Status(StatusCode::kIoError, "cannot create " + path + ": " + std::strerror(errno));
  }
  return std::unique_ptr<McapSink>(std::make_unique<FileSink>(f, path));
}

std::unique_ptr<McapSink> make_ostream_sink(std::ostream& out) {
  return std::make_unique<OstreamSink>(out);
}

Status McapWriterOptions::validate() const {
  if (chunk_size == 0) return invalid("chunk_size must be at least 1 byte");
  if (chunk_size > kMaxChunkSize) {
    return invalid("chunk_size " + std::to_string(chunk_size) + " is above the 2 GiB limit");
  }
  if (compression == Compression::kZstd && (compression_level < -7 || compression_level > 22)) {
    return invalid("compression_level " + std::to_string(compression_level) +
                   " is outside zstd's -7..22");
  }
  if (compression == Compression::kLz4 && (compression_level < 0 || compression_level > 12)) {
    return invalid("compression_level " + std::to_string(compression_level) +
                   " is outside lz4's 0..12");
  }
  if (profile.size() > std::numeric_limits<uint32_t>::max() ||
      library.size() > std::numeric_limits<uint32_t>::max()) {
    return invalid("profile or library string too long");
  }
  return {};
}

McapWriter::McapWriter(McapWriterOptions options) : options_(std::move(options)) {}

McapWriter::~McapWriter() {
  if (sink_ != nullptr && !closed_) static_cast<void>(close());
}

Status McapWriter::open(const std::string& path) {
  if (sink_ != nullptr) return {StatusCode::kFailedPrecondition, "writer already open"};
  if (Status s = options_.validate(); !s.ok()) return s;
  auto sink = open_file_sink(path);
  if (!sink.ok()) return sink.status();
  return open(std::move(sink).value());
}

Status McapWriter::open(std::ostream& out) { return open(make_ostream_sink(out)); }

Status McapWriter::open(std::unique_ptr<McapSink> sink) {
  if (sink_ != nullptr) return {StatusCode::kFailedPrecondition, "writer already open"};
  if (sink == nullptr) return invalid("null sink");
  if (Status s = options_.validate(); !s.ok()) return s;
  sink_ = std::move(sink);
  closed_ = false;
  sticky_error_ = {};
  offset_ = 0;
  data_crc_ = 0;
  in_data_section_ = true;
  schemas_.clear();
  channels_.clear();
  stats_ = {};
  chunk_.clear();
  for (auto& entries : chunk_message_index_) entries.clear();
  channel_counts_.clear();
  chunk_indexes_.clear();
  attachment_indexes_.clear();
  metadata_indexes_.clear();
  if (compressor_ == nullptr) compressor_ = std::make_unique<detail::Compressor>();

  scratch_.clear();
  wire::Appender a(scratch_);
  a.bytes(wire::kMagic, wire::kMagicSize);
  size_t at = a.begin_record(Opcode::kHeader);
  a.str(options_.profile);
  a.str(options_.library);
  a.end_record(at);
  return put(scratch_);
}

Status McapWriter::fail(Status s) {
  if (sticky_error_.ok()) sticky_error_ = s;
  return s;
}

Status McapWriter::put(const uint8_t* data, size_t size) {
  if (!sticky_error_.ok()) return sticky_error_;
  if (Status s = sink_->write(data, size); !s.ok()) {
    return fail(
        Status(s.code(), s.message() + " (at file offset " + std::to_string(offset_) + ")"));
  }
  if (in_data_section_ && options_.enable_crcs)
    data_crc_ = wire::crc32_update(data_crc_, data, size);
  offset_ += size;
  return {};
}

Result<uint16_t> McapWriter::add_schema(std::string_view name, std::string_view encoding,
                                        std::string_view data) {
  if (sink_ == nullptr || closed_) return Status(StatusCode::kFailedPrecondition, "not open");
  if (!sticky_error_.ok()) return sticky_error_;
  if (schemas_.size() >= std::numeric_limits<uint16_t>::max()) {
    return invalid("too many schemas (65535 at most)");
  }
  if (data.size() > std::numeric_limits<uint32_t>::max()) return invalid("schema data too long");
  Schema schema{static_cast<uint16_t>(schemas_.size() + 1), std::string(name),
                std::string(encoding), std::string(data)};
  scratch_.clear();
  wire::Appender a(scratch_);
  size_t at = a.begin_record(Opcode::kSchema);
  a.u16(schema.id);
  a.str(schema.name);
  a.str(schema.encoding);
  a.str(schema.data);
  a.end_record(at);
  if (Status s = put(scratch_); !s.ok()) return s;
  schemas_.push_back(std::move(schema));
  stats_.schema_count = static_cast<uint16_t>(schemas_.size());
  return schemas_.back().id;
}

Result<uint16_t> McapWriter::add_channel(std::string_view topic, std::string_view message_encoding,
                                         uint16_t schema_id, const KeyValueMap& metadata) {
  if (sink_ == nullptr || closed_) return Status(StatusCode::kFailedPrecondition, "not open");
  if (!sticky_error_.ok()) return sticky_error_;
  if (schema_id > schemas_.size()) {
    return invalid("channel " + std::string(topic) + ": unknown schema id " +
                   std::to_string(schema_id));
  }
  if (channels_.size() > std::numeric_limits<uint16_t>::max()) {
    return invalid("too many channels (65536 at most)");
  }
  Channel channel{static_cast<uint16_t>(channels_.size()), schema_id, std::string(topic),
                  std::string(message_encoding), metadata};
  scratch_.clear();
  wire::Appender a(scratch_);
  size_t at = a.begin_record(Opcode::kChannel);
  a.u16(channel.id);
  a.u16(channel.schema_id);
  a.str(channel.topic);
  a.str(channel.message_encoding);
  a.string_map(channel.metadata);
  a.end_record(at);
  if (Status s = put(scratch_); !s.ok()) return s;
  channels_.push_back(std::move(channel));
  stats_.channel_count = static_cast<uint32_t>(channels_.size());
  chunk_message_index_.emplace_back();
  channel_counts_.push_back(0);
  return channels_.back().id;
}

Status McapWriter::write(uint16_t channel_id, uint32_t sequence, SimTime log_time,
                         SimTime publish_time, std::string_view data) {
  return write(
      channel_id, sequence, log_time, publish_time,
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(data.data()), data.size()));
}

Status McapWriter::write(uint16_t channel_id, uint32_t sequence, SimTime log_time,
                         SimTime publish_time, std::span<const uint8_t> data) {
  if (sink_ == nullptr || closed_) return {StatusCode::kFailedPrecondition, "not open"};
  if (!sticky_error_.ok()) return sticky_error_;
  if (channel_id >= channels_.size()) {
    return invalid("message on undeclared channel " + std::to_string(channel_id));
  }
  if (log_time.ns() < 0 || publish_time.ns() < 0) {
    return invalid("negative time on channel " + channels_[channel_id].topic + " (log_time " +
                   std::to_string(log_time.ns()) + " ns)");
  }
  const int64_t t = log_time.ns();
  const uint64_t record_offset = chunk_.size();
  // The record's fixed part in one piece, then the payload: two appends per message.
  uint8_t head[wire::kRecordPrefix + 2 + 4 + 8 + 8];
  wire::store_le(head, static_cast<uint8_t>(Opcode::kMessage), 1);
  wire::store_le(head + 1, 2 + 4 + 8 + 8 + data.size(), 8);
  wire::store_le(head + 9, channel_id, 2);
  wire::store_le(head + 11, sequence, 4);
  wire::store_le(head + 15, static_cast<uint64_t>(t), 8);
  wire::store_le(head + 23, static_cast<uint64_t>(publish_time.ns()), 8);
  chunk_.insert(chunk_.end(), head, head + sizeof(head));
  chunk_.insert(chunk_.end(), data.begin(), data.end());

  if (options_.write_message_indexes) {
    chunk_message_index_[channel_id].emplace_back(t, record_offset);
  }
  if (record_offset == 0) {
    chunk_start_ns_ = t;
    chunk_end_ns_ = t;
  } else {
    chunk_start_ns_ = std::min(chunk_start_ns_, t);
    chunk_end_ns_ = std::max(chunk_end_ns_, t);
  }
  if (stats_.message_count == 0) {
    stats_.message_start_time_ns = t;
    stats_.message_end_time_ns = t;
  } else {
    stats_.message_start_time_ns = std::min(stats_.message_start_time_ns, t);
    stats_.message_end_time_ns = std::max(stats_.message_end_time_ns, t);
  }
  ++stats_.message_count;
  ++channel_counts_[channel_id];

  if (chunk_.size() >= options_.chunk_size) return write_chunk();
  return {};
}

Statistics McapWriter::statistics() const {
  Statistics s = stats_;
  for (size_t id = 0; id < channel_counts_.size(); ++id) {
    s.channel_message_counts[static_cast<uint16_t>(id)] = channel_counts_[id];
  }
  return s;
}

Status McapWriter::close_chunk() {
  if (sink_ == nullptr || closed_) return {StatusCode::kFailedPrecondition, "not open"};
  if (!sticky_error_.ok()) return sticky_error_;
  if (chunk_.empty()) return sink_->flush();
  return write_chunk();
}

Status McapWriter::write_chunk() {
  if (chunk_.empty()) return {};
  const uint32_t crc = options_.enable_crcs ? wire::crc32(chunk_.data(), chunk_.size()) : 0;
  // Uncompressed chunks are written from the chunk buffer itself, not a copy of it.
  const bool raw = options_.compression == Compression::kNone;
  if (!raw) {
    if (Status s = compressor_->compress(options_.compression, options_.compression_level,
                                         chunk_.data(), chunk_.size(), compressed_);
        !s.ok()) {
      return fail(s);
    }
  }
  const std::vector<uint8_t>& body = raw ? chunk_ : compressed_;
  const std::string_view comp = compression_name(options_.compression);
  ChunkIndexEntry entry;
  entry.start_ns = chunk_start_ns_;
  entry.end_ns = chunk_end_ns_;
  entry.chunk_offset = offset_;
  entry.compressed_size = body.size();
  entry.uncompressed_size = chunk_.size();

  scratch_.clear();
  wire::Appender a(scratch_);
  const uint64_t content = 8 + 8 + 8 + 4 + 4 + comp.size() + 8 + body.size();
  a.u8(static_cast<uint8_t>(Opcode::kChunk));
  a.u64(content);
  a.u64(static_cast<uint64_t>(chunk_start_ns_));
  a.u64(static_cast<uint64_t>(chunk_end_ns_));
  a.u64(chunk_.size());
  a.u32(crc);
  a.str(comp);
  a.u64(body.size());
  if (Status s = put(scratch_); !s.ok()) return s;
  if (Status s = put(body); !s.ok()) return s;
  entry.chunk_length = wire::kRecordPrefix + content;

  if (options_.write_message_indexes) {
    scratch_.clear();
    const uint64_t index_start = offset_;
    for (size_t id = 0; id < chunk_message_index_.size(); ++id) {
      const auto& entries = chunk_message_index_[id];
      if (entries.empty()) continue;
      const auto channel = static_cast<uint16_t>(id);
      entry.message_index_offsets[channel] = index_start + scratch_.size();
      // Stored in place: one resize per channel, not two appends per message.
      const size_t index_content = 2 + 4 + entries.size() * 16;
      const size_t at = scratch_.size();
      scratch_.resize(at + wire::kRecordPrefix + index_content);
      uint8_t* p = scratch_.data() + at;
      wire::store_le(p, static_cast<uint8_t>(Opcode::kMessageIndex), 1);
      wire::store_le(p + 1, index_content, 8);
      wire::store_le(p + 9, channel, 2);
      wire::store_le(p + 11, entries.size() * 16, 4);
      p += wire::kRecordPrefix + 6;
      for (const auto& [t, off] : entries) {
        wire::store_le(p, static_cast<uint64_t>(t), 8);
        wire::store_le(p + 8, off, 8);
        p += 16;
      }
    }
    entry.message_index_length = scratch_.size();
    if (Status s = put(scratch_); !s.ok()) return s;
  }

  ++stats_.chunk_count;
  if (options_.write_chunk_indexes) chunk_indexes_.push_back(std::move(entry));
  chunk_.clear();
  for (auto& entries : chunk_message_index_) entries.clear();
  // A single huge message may have grown the buffers; give that memory back.
  if (chunk_.capacity() > 2 * options_.chunk_size + 4096) chunk_.shrink_to_fit();
  if (compressed_.capacity() > 2 * options_.chunk_size + 4096) {
    compressed_.clear();
    compressed_.shrink_to_fit();
  }
  if (Status s = sink_->flush(); !s.ok()) return fail(s);
  return {};
}

Status McapWriter::write_metadata(std::string_view name, const KeyValueMap& metadata) {
  if (sink_ == nullptr || closed_) return {StatusCode::kFailedPrecondition, "not open"};
  if (!sticky_error_.ok()) return sticky_error_;
  scratch_.clear();
  wire::Appender a(scratch_);
  size_t at = a.begin_record(Opcode::kMetadata);
  a.str(name);
  a.string_map(metadata);
  a.end_record(at);
  MetadataIndexEntry e{offset_, scratch_.size(), std::string(name)};
  if (Status s = put(scratch_); !s.ok()) return s;
  metadata_indexes_.push_back(std::move(e));
  ++stats_.metadata_count;
  return {};
}

Status McapWriter::write_attachment(const Attachment& att) {
  return write_attachment(
      att.name, att.content_type, SimTime::from_ns(att.log_time_ns),
      SimTime::from_ns(att.create_time_ns),
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(att.data.data()), att.data.size()));
}

Status McapWriter::write_attachment(std::string_view name, std::string_view content_type,
                                    SimTime log_time, SimTime create_time,
                                    std::span<const uint8_t> data) {
  if (sink_ == nullptr || closed_) return {StatusCode::kFailedPrecondition, "not open"};
  if (!sticky_error_.ok()) return sticky_error_;
  if (log_time.ns() < 0 || create_time.ns() < 0) {
    return invalid("attachment " + std::string(name) + ": negative time");
  }
  scratch_.clear();
  wire::Appender a(scratch_);
  size_t at = a.begin_record(Opcode::kAttachment);
  const size_t fields_start = scratch_.size();
  a.u64(static_cast<uint64_t>(log_time.ns()));
  a.u64(static_cast<uint64_t>(create_time.ns()));
  a.str(name);
  a.str(content_type);
  a.u64(data.size());
  a.bytes(data.data(), data.size());
  const uint32_t crc = options_.enable_crcs ? wire::crc32(scratch_.data() + fields_start,
                                                          scratch_.size() - fields_start)
                                            : 0;
  a.u32(crc);
  a.end_record(at);
  AttachmentInfo info;
  info.offset = offset_;
  info.length = scratch_.size();
  info.log_time_ns = log_time.ns();
  info.create_time_ns = create_time.ns();
  info.data_size = data.size();
  info.name = std::string(name);
  info.content_type = std::string(content_type);
  if (Status s = put(scratch_); !s.ok()) return s;
  attachment_indexes_.push_back(std::move(info));
  ++stats_.attachment_count;
  return {};
}

Status McapWriter::close() {
  if (closed_) return sticky_error_;
  if (sink_ == nullptr) return {StatusCode::kFailedPrecondition, "not open"};
  Status result = write_chunk();
  if (result.ok()) result = write_summary_and_footer();
  Status flushed = sink_->close();
  closed_ = true;
  if (result.ok() && !flushed.ok()) result = fail(flushed);
  sink_.reset();
  return result;
}

Status McapWriter::write_summary_and_footer() {
  if (!sticky_error_.ok()) return sticky_error_;
  // Data End closes the data section; its CRC covers every byte before it, magic included.
  scratch_.clear();
  wire::Appender a(scratch_);
  size_t at = a.begin_record(Opcode::kDataEnd);
  a.u32(options_.enable_crcs ? data_crc_ : 0);
  a.end_record(at);
  in_data_section_ = false;
  if (Status s = put(scratch_); !s.ok()) return s;

  const uint64_t summary_start = offset_;
  std::vector<uint8_t> summary;
  wire::Appender sa(summary);
  struct Group {
    Opcode op;
    uint64_t start;
    uint64_t length;
  };
  std::vector<Group> groups;
  auto group = [&](Opcode op, auto&& emit) {
    const size_t before = summary.size();
    emit();
    if (summary.size() > before) {
      groups.push_back({op, summary_start + before, summary.size() - before});
    }
  };

  group(Opcode::kSchema, [&] { put_schemas(sa, schemas_); });
  group(Opcode::kChannel, [&] { put_channels(sa, channels_); });
  if (options_.write_statistics) {
    group(Opcode::kStatistics, [&] {
      size_t r = sa.begin_record(Opcode::kStatistics);
      sa.u64(stats_.message_count);
      sa.u16(stats_.schema_count);
      sa.u32(stats_.channel_count);
      sa.u32(stats_.attachment_count);
      sa.u32(stats_.metadata_count);
      sa.u32(stats_.chunk_count);
      sa.u64(static_cast<uint64_t>(stats_.message_start_time_ns));
      sa.u64(static_cast<uint64_t>(stats_.message_end_time_ns));
      size_t m = sa.begin_length32();
      for (const auto& [id, n] : statistics().channel_message_counts) {
        sa.u16(id);
        sa.u64(n);
      }
      sa.end_length32(m);
      sa.end_record(r);
    });
  }
  group(Opcode::kChunkIndex,
        [&] { put_chunk_indexes(sa, chunk_indexes_, compression_name(options_.compression)); });
  group(Opcode::kAttachmentIndex, [&] { put_attachment_indexes(sa, attachment_indexes_); });
  group(Opcode::kMetadataIndex, [&] { put_metadata_indexes(sa, metadata_indexes_); });

  uint64_t summary_offset_start = 0;
  if (options_.write_summary_offsets && !groups.empty()) {
    summary_offset_start = summary_start + summary.size();
    for (const Group& g : groups) {
      size_t r = sa.begin_record(Opcode::kSummaryOffset);
      sa.u8(static_cast<uint8_t>(g.op));
      sa.u64(g.start);
      sa.u64(g.length);
      sa.end_record(r);
    }
  }

  const bool has_summary = !summary.empty();
  // The footer's length is written directly (not patched afterwards): the CRC covers it.
  sa.u8(static_cast<uint8_t>(Opcode::kFooter));
  sa.u64(wire::kFooterContent);
  sa.u64(has_summary ? summary_start : 0);
  sa.u64(summary_offset_start);
  // The summary CRC covers the summary, the summary offsets and the footer up to this field.
  uint32_t summary_crc = 0;
  if (options_.enable_crcs && has_summary)
    summary_crc = wire::crc32(summary.data(), summary.size());
  sa.u32(summary_crc);
  sa.bytes(wire::kMagic, wire::kMagicSize);
  if (Status s = put(summary); !s.ok()) return s;
  return {};
}

}  // namespace fieldproof::record
