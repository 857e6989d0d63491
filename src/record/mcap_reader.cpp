#include "fieldproof/record/mcap_reader.hpp"
#include "fieldproof/util/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <queue>
#include <utility>

#include "record/compression.hpp"
#include "record/mcap_wire.hpp"

namespace fieldproof::record {

using wire::Cursor;

// The bytes being read. read() fills exactly n bytes or fails (out of range, I/O error).
class McapReader::Source {
 public:
  virtual ~Source() = default;
  virtual uint64_t size() const = 0;
  virtual bool read(uint64_t offset, uint64_t n, std::vector<uint8_t>& out) = 0;
  bool in_range(uint64_t offset, uint64_t n) const {
    return offset <= size() && n <= size() - offset;
  }
};

namespace {

class FileSource final : public McapReader::Source {
 public:
  FileSource(int fd, uint64_t size) : fd_(fd), size_(size) {}
  ~FileSource() override { ::close(fd_); }
  uint64_t size() const override { return size_; }
  bool read(uint64_t offset, uint64_t n, std::vector<uint8_t>& out) override {
    if (!in_range(offset, n)) return false;
    out.resize(static_cast<size_t>(n));
    uint64_t done = 0;
    while (done < n) {
      ssize_t r = ::pread(fd_, out.data() + done, static_cast<size_t>(n - done),
                          static_cast<off_t>(offset + done));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      done += static_cast<uint64_t>(r);
    }
    return true;
  }

 private:
  int fd_;
  uint64_t size_;
};

class MemorySource final : public McapReader::Source {
 public:
  explicit MemorySource(std::string bytes) : bytes_(std::move(bytes)) {}
  uint64_t size() const override { return bytes_.size(); }
  bool read(uint64_t offset, uint64_t n, std::vector<uint8_t>& out) override {
    if (!in_range(offset, n)) return false;
    const auto* p = reinterpret_cast<const uint8_t*>(bytes_.data()) + offset;
    out.assign(p, p + n);
    return true;
  }

 private:
  std::string bytes_;
};

std::string opcode_name(uint8_t op) {
  switch (static_cast<Opcode>(op)) {
    case Opcode::kHeader:
      return "Header";
    case Opcode::kFooter:
      return "Footer";
    case Opcode::kSchema:
      return "Schema";
    case Opcode::kChannel:
      return "Channel";
    case Opcode::kMessage:
      return "Message";
    case Opcode::kChunk:
      return "Chunk";
    case Opcode::kMessageIndex:
      return "MessageIndex";
    case Opcode::kChunkIndex:
      return "ChunkIndex";
    case Opcode::kAttachment:
      return "Attachment";
    case Opcode::kAttachmentIndex:
      return "AttachmentIndex";
    case Opcode::kStatistics:
      return "Statistics";
    case Opcode::kMetadata:
      return "Metadata";
    case Opcode::kMetadataIndex:
      return "MetadataIndex";
    case Opcode::kSummaryOffset:
      return "SummaryOffset";
    case Opcode::kDataEnd:
      return "DataEnd";
  }
  return "unknown opcode 0x" + [op] {
    const char* hex = "0123456789abcdef";
    return std::string{hex[op >> 4], hex[op & 15]};
  }();
}

std::string at(uint64_t offset) { return " at offset " + std::to_string(offset); }

std::optional<Schema> parse_schema(Cursor c) {
  Schema s;
  s.id = c.u16();
  s.name = c.str();
  s.encoding = c.str();
  s.data = c.str();
  if (!c.ok()) return std::nullopt;
  return s;
}

std::optional<Channel> parse_channel(Cursor c) {
  Channel ch;
  ch.id = c.u16();
  ch.schema_id = c.u16();
  ch.topic = c.str();
  ch.message_encoding = c.str();
  ch.metadata = c.string_map();
  if (!c.ok()) return std::nullopt;
  return ch;
}

struct MessageHeader {
  uint16_t channel_id = 0;
  uint32_t sequence = 0;
  int64_t log_time_ns = 0;
  int64_t publish_time_ns = 0;
  std::span<const uint8_t> data;
};

std::optional<MessageHeader> parse_message(const uint8_t* p, size_t n) {
  Cursor c(p, n);
  MessageHeader m;
  m.channel_id = c.u16();
  m.sequence = c.u32();
  m.log_time_ns = wire::to_ns(c.u64());
  m.publish_time_ns = wire::to_ns(c.u64());
  if (!c.ok()) return std::nullopt;
  m.data = std::span<const uint8_t>(c.pos(), c.remaining());
  return m;
}

struct ChunkFields {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t uncompressed_size = 0;
  uint32_t crc = 0;
  std::string compression;
  std::string_view records;
};

std::optional<ChunkFields> parse_chunk(Cursor c) {
  ChunkFields f;
  f.start_ns = wire::to_ns(c.u64());
  f.end_ns = wire::to_ns(c.u64());
  f.uncompressed_size = c.u64();
  f.crc = c.u32();
  f.compression = c.str();
  f.records = c.take(c.u64());
  if (!c.ok()) return std::nullopt;
  return f;
}

std::optional<std::pair<Attachment, uint32_t>> parse_attachment(Cursor c, uint32_t* computed) {
  const uint8_t* start = c.pos();
  Attachment a;
  a.log_time_ns = wire::to_ns(c.u64());
  a.create_time_ns = wire::to_ns(c.u64());
  a.name = c.str();
  a.content_type = c.str();
  a.data = std::string(c.take(c.u64()));
  if (!c.ok()) return std::nullopt;
  const size_t fields = static_cast<size_t>(c.pos() - start);
  uint32_t crc = c.u32();
  if (!c.ok()) return std::nullopt;
  if (computed != nullptr) *computed = crc == 0 ? 0 : wire::crc32(start, fields);
  return std::make_pair(std::move(a), crc);
}

std::optional<Statistics> parse_statistics(Cursor c) {
  Statistics s;
  s.message_count = c.u64();
  s.schema_count = c.u16();
  s.channel_count = c.u32();
  s.attachment_count = c.u32();
  s.metadata_count = c.u32();
  s.chunk_count = c.u32();
  s.message_start_time_ns = wire::to_ns(c.u64());
  s.message_end_time_ns = wire::to_ns(c.u64());
  Cursor m = c.sub32();
  while (m.ok() && m.remaining() > 0) {
    uint16_t id = m.u16();
    uint64_t n = m.u64();
    if (m.ok()) s.channel_message_counts[id] = n;
  }
  if (!c.ok() || !m.ok()) return std::nullopt;
  return s;
}

// True when the file ends with a Footer record and the magic (it was closed).
bool ends_with_footer(McapReader::Source& source, uint64_t data_start) {
  const uint64_t size = source.size();
  if (size < data_start + wire::kFooterRecord + wire::kMagicSize) return false;
  std::vector<uint8_t> tail;
  if (!source.read(size - wire::kMagicSize - wire::kFooterRecord,
                   wire::kFooterRecord + wire::kMagicSize, tail)) {
    return false;
  }
  Cursor fc(tail.data(), wire::kFooterRecord);
  return std::memcmp(tail.data() + wire::kFooterRecord, wire::kMagic, wire::kMagicSize) == 0 &&
         fc.u8() == static_cast<uint8_t>(Opcode::kFooter) && fc.u64() == wire::kFooterContent;
}

}  // namespace

McapReader::McapReader() = default;
McapReader::~McapReader() = default;
McapReader::McapReader(McapReader&&) noexcept = default;
McapReader& McapReader::operator=(McapReader&&) noexcept = default;

uint64_t McapReader::file_size() const { return source_ ? source_->size() : 0; }

void McapReader::reset() {
  source_.reset();
  profile_.clear();
  library_.clear();
  data_start_ = 0;
  used_summary_ = false;
  has_footer_ = false;
  schemas_.clear();
  channels_.clear();
  stats_ = {};
  metadata_.clear();
  attachments_.clear();
  problems_.clear();
  chunks_.clear();
  loose_messages_.clear();
}

void McapReader::problem(uint64_t offset, std::string message) {
  // Every message names where: offsets are what a person needs to look at a damaged file.
  if (message.find("offset") == std::string::npos)
    message = "at offset " + std::to_string(offset) + ": " + message;
  McapProblem p{offset, std::move(message)};
  if (options_.on_problem) options_.on_problem(p);
  problems_.push_back(std::move(p));
}

Status McapReader::open(const std::string& path, McapReaderOptions options) {
  // A FIFO or a device (/dev/zero, /dev/urandom) is refused unread: a recording is a regular file
  // (read in place, never whole, so no size limit).
  util::CheckedFile f(path, util::kNoSizeLimit, "the recording");
  if (!f.status().ok()) {
    // Opened but not a regular file: bad input (play exits 2); not there: an I/O error.
    return {f.fd() >= 0 ? StatusCode::kInvalidArgument : StatusCode::kIoError,
            f.status().message()};
  }
  const uint64_t size = f.size();
  Status s = open_source(std::make_unique<FileSource>(f.release(), size), std::move(options));
  if (!s.ok()) return Status(s.code(), path + ": " + s.message());
  return s;
}

Status McapReader::open_bytes(std::string bytes, McapReaderOptions options) {
  return open_source(std::make_unique<MemorySource>(std::move(bytes)), std::move(options));
}

Status McapReader::open_source(std::unique_ptr<Source> source, McapReaderOptions options) {
  reset();
  options_ = std::move(options);
  const uint64_t size = source->size();
  std::vector<uint8_t> buf;
  if (size < wire::kMagicSize) {
    return {StatusCode::kNotMcap,
            "not an MCAP file: " + std::to_string(size) + " bytes, shorter than the 8-byte magic"};
  }
  if (!source->read(0, wire::kMagicSize, buf)) return {StatusCode::kIoError, "read failed"};
  if (std::memcmp(buf.data(), wire::kMagic, wire::kMagicSize) != 0) {
    return {StatusCode::kNotMcap, "not an MCAP file: wrong magic at offset 0"};
  }
  source_ = std::move(source);
  data_start_ = wire::kMagicSize;

  // Header: the first record. Without it nothing else can be trusted to be MCAP; a file cut this
  // early opens empty with a problem.
  if (!source_->read(wire::kMagicSize, wire::kRecordPrefix, buf)) {
    problem(wire::kMagicSize, "file cut short inside the Header record");
    return {};
  }
  Cursor hc(buf.data(), buf.size());
  const uint8_t op = hc.u8();
  uint64_t len = hc.u64();
  if (op != static_cast<uint8_t>(Opcode::kHeader)) {
    problem(wire::kMagicSize, "first record is " + opcode_name(op) + ", not a Header");
    return {};
  }
  if (!source_->in_range(wire::kMagicSize + wire::kRecordPrefix, len) || len > (1u << 20)) {
    // A damaged length field: the Header's own fields (two strings) say where it ends; when the
    // next record starts there, reading resynchronises on it instead of giving up on the file.
    const std::optional<uint64_t> real = header_length_from_fields();
    if (!real) {
      problem(wire::kMagicSize, "Header record of " + std::to_string(len) +
                                    " bytes runs past the end of the file (cut short?)");
      return {};
    }
    problem(wire::kMagicSize, "Header record's length field says " + std::to_string(len) +
                                  " bytes, its fields take " + std::to_string(*real) +
                                  ": resynchronised on the record after them");
    len = *real;
  }
  if (!source_->read(wire::kMagicSize + wire::kRecordPrefix, len, buf)) {
    return {StatusCode::kIoError, "read failed" + at(wire::kMagicSize)};
  }
  Cursor h(buf.data(), buf.size());
  profile_ = h.str();
  library_ = h.str();
  if (!h.ok()) problem(wire::kMagicSize, "malformed Header record");
  data_start_ = wire::kMagicSize + wire::kRecordPrefix + len;

  has_footer_ = ends_with_footer(*source_, data_start_);
  if (!(options_.use_summary && has_footer_ && read_summary())) scan();
  return {};
}

std::optional<uint64_t> McapReader::header_length_from_fields() const {
  const uint64_t body_at = wire::kMagicSize + wire::kRecordPrefix;
  std::vector<uint8_t> b;
  uint64_t off = 0;
  for (int i = 0; i < 2; ++i) {  // profile, library
    if (!source_->read(body_at + off, 4, b)) return std::nullopt;
    const uint64_t n = uint64_t{b[0]} | uint64_t{b[1]} << 8 | uint64_t{b[2]} << 16 |
                       uint64_t{b[3]} << 24;
    if (n > (1u << 16)) return std::nullopt;
    off += 4 + n;
  }
  // The next record: a known opcode (Schema .. Footer) whose length fits in the file.
  if (!source_->in_range(body_at + off, wire::kRecordPrefix)) return std::nullopt;
  if (!source_->read(body_at + off, wire::kRecordPrefix, b)) return std::nullopt;
  Cursor c(b.data(), b.size());
  const uint8_t op = c.u8();
  const uint64_t len = c.u64();
  if (op < 0x02 || op > 0x0F) return std::nullopt;
  if (!source_->in_range(body_at + off + wire::kRecordPrefix, len)) return std::nullopt;
  return off;
}

// Reads the summary section the Footer points at into the reader's tables. Nothing is kept
// unless the whole summary parses: any doubt and read() is false, and the caller scans instead.
class McapReader::SummaryReader {
 public:
  explicit SummaryReader(McapReader& reader) : r_(reader) {}

  bool read() {
    if (!load_section() || !parse_records()) return false;
    // Messages the chunk indexes cannot find (no index group, or messages outside chunks): only
    // a scan sees them.
    if (!saw_chunk_index_group_ && (!stats_ || stats_->message_count > 0)) return false;
    r_.schemas_ = std::move(schemas_);
    r_.channels_ = std::move(channels_);
    r_.chunks_ = std::move(chunks_);
    r_.attachments_ = std::move(attachments_);
    r_.used_summary_ = true;
    read_metadata();
    fill_statistics();
    return true;
  }

 private:
  // The Footer, then the summary's bytes, its CRC checked: false when the file has no usable
  // summary.
  bool load_section() {
    const uint64_t size = r_.source_->size();
    if (size < r_.data_start_ + wire::kFooterRecord + wire::kMagicSize) return false;
    const uint64_t footer_offset = size - wire::kMagicSize - wire::kFooterRecord;
    std::vector<uint8_t> tail;
    if (!r_.source_->read(footer_offset, wire::kFooterRecord + wire::kMagicSize, tail)) {
      return false;
    }
    if (std::memcmp(tail.data() + wire::kFooterRecord, wire::kMagic, wire::kMagicSize) != 0) {
      return false;  // no trailing magic: not closed; the scan says so
    }
    Cursor fc(tail.data(), wire::kFooterRecord);
    if (fc.u8() != static_cast<uint8_t>(Opcode::kFooter) || fc.u64() != wire::kFooterContent) {
      r_.problem(footer_offset, "trailing magic present but no Footer record before it");
      return false;
    }
    start_ = fc.u64();
    fc.u64();  // summary_offset_start: the summary is read whole, its offsets are not needed
    const uint32_t summary_crc = fc.u32();
    if (start_ == 0) return false;  // a valid file without a summary: scan it
    if (start_ < r_.data_start_ || start_ > footer_offset) {
      r_.problem(footer_offset, "Footer's summary_start " + std::to_string(start_) +
                                    " is outside the file's records; scanning instead");
      return false;
    }
    if (!r_.source_->read(start_, footer_offset - start_, bytes_)) return false;
    if (r_.options_.verify_crcs && summary_crc != 0) {
      uint32_t crc = wire::crc32(bytes_.data(), bytes_.size());
      crc = wire::crc32_update(crc, tail.data(), wire::kRecordPrefix + 16);
      if (crc != summary_crc) {
        r_.problem(start_, "summary CRC mismatch (stored " + std::to_string(summary_crc) +
                               ", computed " + std::to_string(crc) + "); scanning instead");
        return false;
      }
    }
    return true;
  }

  // Every record of the summary; false (after saying why) at the first that does not parse.
  bool parse_records() {
    Cursor c(bytes_.data(), bytes_.size());
    while (c.remaining() > 0) {
      const uint64_t rec_offset = start_ + (bytes_.size() - c.remaining());
      const uint8_t op = c.u8();
      const uint64_t len = c.u64();
      Cursor body = Cursor::failed();
      if (c.ok() && len <= c.remaining()) {
        std::string_view v = c.take(len);
        body = Cursor(reinterpret_cast<const uint8_t*>(v.data()), v.size());
      }
      if (!c.ok() || !body.ok()) {
        r_.problem(rec_offset, "summary record runs past the footer; scanning instead");
        return false;
      }
      if (!parse_record(op, body, rec_offset)) {
        r_.problem(rec_offset,
                   "malformed " + opcode_name(op) + " record in the summary; scanning instead");
        return false;
      }
    }
    return true;
  }

  // One summary record; false when it is malformed.
  bool parse_record(uint8_t op, Cursor body, uint64_t rec_offset) {
    switch (static_cast<Opcode>(op)) {
      case Opcode::kSchema: {
        auto s = parse_schema(body);
        if (s && s->id != 0) schemas_[s->id] = std::move(*s);
        return s.has_value();
      }
      case Opcode::kChannel: {
        auto ch = parse_channel(body);
        if (ch) channels_[ch->id] = std::move(*ch);
        return ch.has_value();
      }
      case Opcode::kChunkIndex:
        saw_chunk_index_group_ = true;
        return parse_chunk_index(body, rec_offset);
      case Opcode::kAttachmentIndex: {
        AttachmentInfo a;
        a.offset = body.u64();
        a.length = body.u64();
        a.log_time_ns = wire::to_ns(body.u64());
        a.create_time_ns = wire::to_ns(body.u64());
        a.data_size = body.u64();
        a.name = body.str();
        a.content_type = body.str();
        if (body.ok()) attachments_.push_back(std::move(a));
        return body.ok();
      }
      case Opcode::kStatistics:
        stats_ = parse_statistics(body);
        return stats_.has_value();
      case Opcode::kMetadataIndex: {
        uint64_t off = body.u64();
        uint64_t length = body.u64();
        body.str();
        if (body.ok()) metadata_refs_.emplace_back(off, length);
        return body.ok();
      }
      default:
        return true;  // summary offsets, unknown records: not needed
    }
  }

  // A ChunkIndex; false when malformed. One whose chunk cannot be read (an unknown compression,
  // outside the file) is skipped with a problem, not an error.
  bool parse_chunk_index(Cursor body, uint64_t rec_offset) {
    ChunkRef r;
    r.start_ns = wire::to_ns(body.u64());
    r.end_ns = wire::to_ns(body.u64());
    r.offset = body.u64();
    r.length = body.u64();
    Cursor m = body.sub32();
    while (m.ok() && m.remaining() > 0) {
      uint16_t id = m.u16();
      uint64_t off = m.u64();
      if (m.ok()) r.message_index_offsets[id] = off;
    }
    r.message_index_length = body.u64();
    std::string comp = body.str();
    body.u64();  // compressed_size and uncompressed_size: the chunk record repeats them
    body.u64();
    if (!body.ok() || !m.ok()) return false;
    auto cm = parse_compression(comp);
    if (!cm) {
      r_.problem(r.offset, "chunk uses unsupported compression '" + comp + "'; skipped");
      return true;
    }
    if (!r_.source_->in_range(r.offset, r.length) || r.offset < r_.data_start_) {
      r_.problem(rec_offset, "ChunkIndex points outside the file" + at(r.offset) + "; skipped");
      return true;
    }
    r.compression = *cm;
    chunks_.push_back(std::move(r));
    return true;
  }

  // The Metadata records the MetadataIndex entries point at; a bad entry is skipped.
  void read_metadata() {
    std::vector<uint8_t> rec;
    for (const auto& [off, length] : metadata_refs_) {
      if (length < wire::kRecordPrefix || length > (uint64_t{64} << 20) ||
          !r_.source_->read(off, length, rec)) {
        r_.problem(off, "MetadataIndex points outside the file; skipped");
        continue;
      }
      Cursor mc(rec.data(), rec.size());
      const uint8_t op = mc.u8();
      const uint64_t len = mc.u64();
      Metadata m;
      m.name = mc.str();
      m.metadata = mc.string_map();
      if (op != static_cast<uint8_t>(Opcode::kMetadata) || len != length - wire::kRecordPrefix ||
          !mc.ok()) {
        r_.problem(off, "MetadataIndex does not point at a whole Metadata record; skipped");
        continue;
      }
      r_.metadata_.push_back(std::move(m));
    }
  }

  // The Statistics record, or what the indexes say when there was none.
  void fill_statistics() {
    Statistics& st = r_.stats_;
    if (stats_) {
      st = *stats_;
      return;
    }
    st = {};
    st.schema_count = static_cast<uint16_t>(r_.schemas_.size());
    st.channel_count = static_cast<uint32_t>(r_.channels_.size());
    st.attachment_count = static_cast<uint32_t>(r_.attachments_.size());
    st.metadata_count = static_cast<uint32_t>(r_.metadata_.size());
    st.chunk_count = static_cast<uint32_t>(r_.chunks_.size());
    bool first = true;
    for (const ChunkRef& c : r_.chunks_) {
      st.message_start_time_ns =
          first ? c.start_ns : std::min(st.message_start_time_ns, c.start_ns);
      st.message_end_time_ns = first ? c.end_ns : std::max(st.message_end_time_ns, c.end_ns);
      first = false;
    }
  }

  McapReader& r_;
  uint64_t start_ = 0;          // of the summary section
  std::vector<uint8_t> bytes_;  // the summary section
  std::map<uint16_t, Schema> schemas_;
  std::map<uint16_t, Channel> channels_;
  std::vector<ChunkRef> chunks_;
  std::vector<AttachmentInfo> attachments_;
  std::vector<std::pair<uint64_t, uint64_t>> metadata_refs_;
  std::optional<Statistics> stats_;
  bool saw_chunk_index_group_ = false;
};

bool McapReader::read_summary() { return SummaryReader(*this).read(); }

// Reads the file record by record from the data section's start, as far as it goes: what the
// summary would have said (schemas, channels, chunks, attachments, metadata, statistics) is
// rebuilt, and each damaged record is a problem, skipped.
class McapReader::Scanner {
 public:
  explicit Scanner(McapReader& reader) : r_(reader) {}

  void run() {
    r_.used_summary_ = false;
    r_.schemas_.clear();
    r_.channels_.clear();
    r_.chunks_.clear();
    r_.attachments_.clear();
    r_.metadata_.clear();
    r_.loose_messages_.clear();
    r_.stats_ = {};

    const uint64_t size = r_.source_->size();
    const uint64_t max_record = r_.options_.max_chunk_uncompressed_size + (uint64_t{1} << 20);
    // The data section CRC covers every byte before the Data End record, magic included.
    crc_known_ = r_.options_.verify_crcs && r_.source_->read(0, r_.data_start_, buf_);
    if (crc_known_) crc_ = wire::crc32(buf_.data(), buf_.size());
    uint64_t pos = r_.data_start_;
    while (true) {
      if (pos >= size) {
        r_.problem(pos, "file ends" + at(pos) +
                            " without a Data End record: it was not closed (cut short?); kept "
                            "what precedes");
        break;
      }
      if (size - pos < wire::kRecordPrefix) {
        r_.problem(pos, "file cut short: " + std::to_string(size - pos) + " trailing bytes" +
                            at(pos) + " are not a whole record; skipped");
        break;
      }
      if (!r_.source_->read(pos, wire::kRecordPrefix, prefix_)) {
        r_.problem(pos, "read failed" + at(pos));
        break;
      }
      Cursor pc(prefix_.data(), prefix_.size());
      const uint8_t op = pc.u8();
      const uint64_t len = pc.u64();
      const uint64_t body_at = pos + wire::kRecordPrefix;
      if (len > size - body_at) {
        r_.problem(pos, opcode_name(op) + " record" + at(pos) + " claims " + std::to_string(len) +
                            " bytes but only " + std::to_string(size - body_at) +
                            " remain: file cut short; skipped");
        break;
      }
      if (len > max_record) {
        r_.problem(pos, opcode_name(op) + " record" + at(pos) + " of " + std::to_string(len) +
                            " bytes exceeds the reader's limit; skipped");
        crc_known_ = false;
        pos = body_at + len;
        continue;
      }
      if (!r_.source_->read(body_at, len, buf_)) {
        r_.problem(pos, "read failed" + at(pos));
        break;
      }
      const uint32_t crc_before = crc_;
      if (crc_known_) {
        crc_ = wire::crc32_update(crc_, prefix_.data(), prefix_.size());
        crc_ = wire::crc32_update(crc_, buf_.data(), buf_.size());
      }
      const bool stop = record(op, pos, len, crc_before);
      pos = body_at + len;
      if (stop) break;
    }
    finish_statistics();
  }

 private:
  // The record at `pos` (its body in buf_); true when the scan ends with it.
  bool record(uint8_t op, uint64_t pos, uint64_t len, uint32_t crc_before) {
    Cursor body(buf_.data(), buf_.size());
    switch (static_cast<Opcode>(op)) {
      case Opcode::kDataEnd: {
        const uint32_t stored = body.u32();
        if (body.ok() && crc_known_ && stored != 0 && stored != crc_before) {
          r_.problem(pos, "data section CRC mismatch (stored " + std::to_string(stored) +
                              ", computed " + std::to_string(crc_before) + ")");
        }
        if (!r_.has_footer_) {
          r_.problem(pos, "the file ends after the Data End record" + at(pos) +
                              " without its summary and footer (cut short while closing)");
        }
        return true;
      }
      case Opcode::kFooter:
        r_.problem(pos, "Footer met before any Data End record");
        return true;
      case Opcode::kSchema:
        add_schema(body, pos);
        break;
      case Opcode::kChannel:
        add_channel(body, pos);
        break;
      case Opcode::kMessage:
        loose_message(pos);
        break;
      case Opcode::kChunk:
        chunk(body, pos, len);
        break;
      case Opcode::kAttachment:
        attachment(body, pos, len);
        break;
      case Opcode::kMetadata: {
        Metadata m;
        m.name = body.str();
        m.metadata = body.string_map();
        if (!body.ok()) {
          r_.problem(pos, "malformed Metadata record; skipped");
        } else {
          r_.metadata_.push_back(std::move(m));
        }
        break;
      }
      case Opcode::kHeader:
        r_.problem(pos, "a second Header record; ignored");
        break;
      default:
        break;  // message indexes (rebuilt on demand), unknown opcodes: skipped as the spec says
    }
    return false;
  }

  // A Message record outside any chunk (its body in buf_).
  void loose_message(uint64_t pos) {
    auto m = parse_message(buf_.data(), buf_.size());
    if (!m) {
      r_.problem(pos, "malformed Message record; skipped");
    } else if (!r_.channels_.contains(m->channel_id)) {
      r_.problem(pos,
                 "Message on undeclared channel " + std::to_string(m->channel_id) + "; skipped");
    } else {
      r_.loose_messages_.push_back(pos);
      count_message(*m);
    }
  }

  // A Chunk record: decompressed, its CRC checked, its records read; kept as a ChunkRef.
  void chunk(Cursor body, uint64_t pos, uint64_t len) {
    auto f = parse_chunk(body);
    if (!f) {
      r_.problem(pos, "malformed Chunk record; skipped");
      return;
    }
    auto comp = parse_compression(f->compression);
    if (!comp) {
      r_.problem(pos, "Chunk uses unsupported compression '" + f->compression + "'; skipped");
      return;
    }
    if (f->uncompressed_size > r_.options_.max_chunk_uncompressed_size) {
      r_.problem(pos, "Chunk claims " + std::to_string(f->uncompressed_size) +
                          " uncompressed bytes, above the reader's limit; skipped");
      return;
    }
    const auto* data = reinterpret_cast<const uint8_t*>(f->records.data());
    if (Status s =
            detail::decompress(*comp, data, f->records.size(), f->uncompressed_size, records_);
        !s.ok()) {
      r_.problem(pos, "Chunk cannot be decompressed (" + s.message() + "); skipped");
      return;
    }
    if (r_.options_.verify_crcs && f->crc != 0) {
      const uint32_t computed = wire::crc32(records_.data(), records_.size());
      if (computed != f->crc) {
        r_.problem(pos, "Chunk CRC mismatch (stored " + std::to_string(f->crc) + ", computed " +
                            std::to_string(computed) + "); skipped");
        return;
      }
    }
    ChunkRef ref;
    ref.offset = pos;
    ref.length = wire::kRecordPrefix + len;
    ref.compression = *comp;
    chunk_records(pos, ref);
    r_.chunks_.push_back(std::move(ref));
  }

  // The records of the chunk at `pos` (decompressed in records_); its messages' times go to ref.
  void chunk_records(uint64_t pos, ChunkRef& ref) {
    bool any = false;
    Cursor rc(records_.data(), records_.size());
    while (rc.remaining() > 0) {
      const uint64_t inner = records_.size() - rc.remaining();
      const uint8_t iop = rc.u8();
      const uint64_t ilen = rc.u64();
      if (!rc.ok() || ilen > rc.remaining()) {
        r_.problem(pos, "Chunk's record at inner offset " + std::to_string(inner) +
                            " runs past the chunk's end; the rest of the chunk is skipped");
        break;
      }
      std::string_view iv = rc.take(ilen);
      Cursor ib(reinterpret_cast<const uint8_t*>(iv.data()), iv.size());
      if (iop == static_cast<uint8_t>(Opcode::kSchema)) {
        add_schema(ib, pos);
      } else if (iop == static_cast<uint8_t>(Opcode::kChannel)) {
        add_channel(ib, pos);
      } else if (iop == static_cast<uint8_t>(Opcode::kMessage)) {
        auto m = parse_message(reinterpret_cast<const uint8_t*>(iv.data()), iv.size());
        if (!m) {
          r_.problem(pos, "malformed Message at inner offset " + std::to_string(inner) +
                              " of the Chunk; skipped");
        } else if (!r_.channels_.contains(m->channel_id)) {
          r_.problem(pos, "Message on undeclared channel " + std::to_string(m->channel_id) +
                              " in the Chunk; skipped");
        } else {
          ref.start_ns = any ? std::min(ref.start_ns, m->log_time_ns) : m->log_time_ns;
          ref.end_ns = any ? std::max(ref.end_ns, m->log_time_ns) : m->log_time_ns;
          any = true;
          count_message(*m);
        }
      }
    }
  }

  void attachment(Cursor body, uint64_t pos, uint64_t len) {
    uint32_t computed = 0;
    auto a = parse_attachment(body, r_.options_.verify_crcs ? &computed : nullptr);
    if (!a) {
      r_.problem(pos, "malformed Attachment record; skipped");
    } else if (r_.options_.verify_crcs && a->second != 0 && computed != a->second) {
      r_.problem(pos, "Attachment '" + a->first.name + "' CRC mismatch; skipped");
    } else {
      AttachmentInfo info;
      info.offset = pos;
      info.length = wire::kRecordPrefix + len;
      info.log_time_ns = a->first.log_time_ns;
      info.create_time_ns = a->first.create_time_ns;
      info.data_size = a->first.data.size();
      info.name = a->first.name;
      info.content_type = a->first.content_type;
      r_.attachments_.push_back(std::move(info));
    }
  }

  void count_message(const MessageHeader& m) {
    Statistics& st = r_.stats_;
    if (messages_ == 0) {
      st.message_start_time_ns = m.log_time_ns;
      st.message_end_time_ns = m.log_time_ns;
    } else {
      st.message_start_time_ns = std::min(st.message_start_time_ns, m.log_time_ns);
      st.message_end_time_ns = std::max(st.message_end_time_ns, m.log_time_ns);
    }
    ++messages_;
    ++st.channel_message_counts[m.channel_id];
  }

  void add_schema(Cursor body, uint64_t offset) {
    auto s = parse_schema(body);
    if (!s) return r_.problem(offset, "malformed Schema record; skipped");
    if (s->id != 0) r_.schemas_[s->id] = std::move(*s);
  }

  void add_channel(Cursor body, uint64_t offset) {
    auto ch = parse_channel(body);
    if (!ch) return r_.problem(offset, "malformed Channel record; skipped");
    r_.channels_[ch->id] = std::move(*ch);
  }

  void finish_statistics() {
    Statistics& st = r_.stats_;
    st.message_count = messages_;
    st.schema_count = static_cast<uint16_t>(r_.schemas_.size());
    st.channel_count = static_cast<uint32_t>(r_.channels_.size());
    st.attachment_count = static_cast<uint32_t>(r_.attachments_.size());
    st.metadata_count = static_cast<uint32_t>(r_.metadata_.size());
    st.chunk_count = static_cast<uint32_t>(r_.chunks_.size());
    for (const auto& [id, ch] : r_.channels_) st.channel_message_counts.try_emplace(id, 0);
  }

  McapReader& r_;
  std::vector<uint8_t> buf_;      // the current record's body
  std::vector<uint8_t> prefix_;   // its opcode and length
  std::vector<uint8_t> records_;  // the current chunk's records, decompressed
  bool crc_known_ = false;        // the data section's CRC can still be checked
  uint32_t crc_ = 0;              // of the data section so far
  uint64_t messages_ = 0;
};

void McapReader::scan() { Scanner(*this).run(); }

Status McapReader::load_chunk(const ChunkRef& chunk, std::vector<uint8_t>& scratch,
                              std::vector<uint8_t>& records, size_t* records_at) {
  const uint64_t max_record = options_.max_chunk_uncompressed_size + (uint64_t{1} << 20);
  // Uncompressed chunks are read straight into the records buffer: no copy.
  std::vector<uint8_t>& buf = chunk.compression == Compression::kNone ? records : scratch;
  if (chunk.length < wire::kRecordPrefix || chunk.length > max_record ||
      !source_->read(chunk.offset, chunk.length, buf)) {
    return {StatusCode::kCorrupt, "chunk" + at(chunk.offset) + " is outside the file"};
  }
  Cursor c(buf.data(), buf.size());
  const uint8_t op = c.u8();
  const uint64_t len = c.u64();
  if (op != static_cast<uint8_t>(Opcode::kChunk) || len != chunk.length - wire::kRecordPrefix) {
    return {StatusCode::kCorrupt, "no Chunk record" + at(chunk.offset)};
  }
  auto f = parse_chunk(Cursor(c.pos(), c.remaining()));
  if (!f) return {StatusCode::kCorrupt, "malformed Chunk record" + at(chunk.offset)};
  auto comp = parse_compression(f->compression);
  if (!comp) {
    return {StatusCode::kUnsupported,
            "Chunk" + at(chunk.offset) + " uses unsupported compression '" + f->compression + "'"};
  }
  if (f->uncompressed_size > options_.max_chunk_uncompressed_size) {
    return {StatusCode::kCorrupt, "Chunk" + at(chunk.offset) + " claims too many bytes"};
  }
  const auto* data = reinterpret_cast<const uint8_t*>(f->records.data());
  if (*comp != chunk.compression) {
    return {StatusCode::kCorrupt, "Chunk" + at(chunk.offset) + " compression '" + f->compression +
                                      "' differs from its index"};
  }
  if (*comp == Compression::kNone) {
    if (f->records.size() != f->uncompressed_size) {
      return {StatusCode::kCorrupt,
              "Chunk" + at(chunk.offset) + " holds " + std::to_string(f->records.size()) +
                  " bytes, its uncompressed_size says " + std::to_string(f->uncompressed_size)};
    }
    *records_at = static_cast<size_t>(data - records.data());
  } else {
    if (Status s =
            detail::decompress(*comp, data, f->records.size(), f->uncompressed_size, records);
        !s.ok()) {
      return {s.code(), "Chunk" + at(chunk.offset) + ": " + s.message()};
    }
    *records_at = 0;
  }
  if (options_.verify_crcs && f->crc != 0) {
    const uint32_t computed =
        wire::crc32(records.data() + *records_at, records.size() - *records_at);
    if (computed != f->crc) {
      return {StatusCode::kCorrupt, "Chunk" + at(chunk.offset) + " CRC mismatch (stored " +
                                        std::to_string(f->crc) + ", computed " +
                                        std::to_string(computed) + ")"};
    }
  }
  return {};
}

namespace {

// One message waiting to be handed out: its sort key and where its record's content is.
struct Entry {
  int64_t log_time_ns;
  uint64_t file_key;   // chunk record offset, or the loose message's own offset
  uint64_t inner_key;  // offset inside the chunk's records (0 for a loose message)
  const uint8_t* body;
  size_t body_len;
  bool operator<(const Entry& o) const {
    if (log_time_ns != o.log_time_ns) return log_time_ns < o.log_time_ns;
    if (file_key != o.file_key) return file_key < o.file_key;
    return inner_key < o.inner_key;
  }
};

// The sorted messages of one loaded chunk (or of all loose messages) and the next to hand out.
// Merging cursors rather than single messages keeps the common case (chunks in time order, not
// overlapping) at one heap element.
struct Run {
  std::vector<uint8_t> storage;  // the decompressed records the entries point into
  std::vector<std::vector<uint8_t>> loose_storage;
  std::vector<Entry> entries;
  size_t next = 0;
  const Entry& head() const { return entries[next]; }
};

struct RunAfter {
  bool operator()(const Run* a, const Run* b) const { return b->head() < a->head(); }
};

}  // namespace

// One read_messages: the loose messages and the chunks that overlap the query, each a sorted run
// of entries, merged by log time through a heap; a chunk is loaded only when the merge reaches
// its start time.
class McapReader::MessageMerge {
 public:
  MessageMerge(McapReader& reader, const ReadMessageOptions& query) : r_(reader), query_(query) {}

  void run(const std::function<bool(const MessageView&)>& on_message) {
    select_channels();
    add_loose_messages();
    std::vector<const ChunkRef*> candidates;
    for (const ChunkRef& c : r_.chunks_) {
      if (c.end_ns >= query_.start_ns && c.start_ns < query_.end_ns) candidates.push_back(&c);
    }
    std::sort(candidates.begin(), candidates.end(), [](const ChunkRef* a, const ChunkRef* b) {
      return a->start_ns != b->start_ns ? a->start_ns < b->start_ns : a->offset < b->offset;
    });
    size_t next = 0;
    while (true) {
      while (next < candidates.size() &&
             (heap_.empty() || candidates[next]->start_ns <= heap_.top()->head().log_time_ns)) {
        load(*candidates[next]);
        ++next;
      }
      if (heap_.empty()) break;
      Run* run = heap_.top();
      heap_.pop();
      const Entry& e = run->head();
      auto m = parse_message(e.body, e.body_len);  // validated when added
      MessageView view;
      view.channel = channel_by_id_[m->channel_id];
      view.schema = schema_by_channel_[m->channel_id];
      view.sequence = m->sequence;
      view.log_time_ns = m->log_time_ns;
      view.publish_time_ns = m->publish_time_ns;
      view.data = m->data;
      if (!on_message(view)) break;
      if (++run->next < run->entries.size()) {
        heap_.push(run);
      } else {
        // Done with this chunk: give its memory back now, not at the end of the read.
        if (pool_.size() < 4) pool_.push_back(std::move(run->storage));
        run->storage = {};
        run->loose_storage = {};
        run->entries = {};
      }
    }
  }

 private:
  // Channel lookups by id, resolved once per read: the query's topics only.
  void select_channels() {
    if (!r_.channels_.empty()) {
      channel_by_id_.assign(static_cast<size_t>(r_.channels_.rbegin()->first) + 1, nullptr);
      schema_by_channel_.assign(channel_by_id_.size(), nullptr);
    }
    for (const auto& [id, ch] : r_.channels_) {
      if (!query_.topics.empty() &&
          std::find(query_.topics.begin(), query_.topics.end(), ch.topic) == query_.topics.end()) {
        continue;
      }
      channel_by_id_[id] = &ch;
      auto sit = r_.schemas_.find(ch.schema_id);
      if (ch.schema_id != 0 && sit != r_.schemas_.end()) schema_by_channel_[id] = &sit->second;
    }
  }

  bool usable(uint16_t channel) const {
    return channel < channel_by_id_.size() && channel_by_id_[channel] != nullptr;
  }
  bool in_range(int64_t t) const { return t >= query_.start_ns && t < query_.end_ns; }

  void add_run(std::unique_ptr<Run> run) {
    if (run->entries.empty()) return;
    std::sort(run->entries.begin(), run->entries.end());
    heap_.push(run.get());
    runs_.push_back(std::move(run));
  }

  // Messages outside chunks (found by the scan): one run.
  void add_loose_messages() {
    if (r_.loose_messages_.empty()) return;
    auto run = std::make_unique<Run>();
    std::vector<uint8_t> prefix;
    for (uint64_t off : r_.loose_messages_) {
      if (!r_.source_->read(off, wire::kRecordPrefix, prefix)) continue;
      Cursor pc(prefix.data(), prefix.size());
      pc.u8();
      const uint64_t len = pc.u64();
      std::vector<uint8_t> rec;
      if (!r_.source_->read(off + wire::kRecordPrefix, len, rec)) continue;
      auto m = parse_message(rec.data(), rec.size());
      if (!m || !usable(m->channel_id) || !in_range(m->log_time_ns)) continue;
      run->loose_storage.push_back(std::move(rec));
      const auto& stored = run->loose_storage.back();
      run->entries.push_back(Entry{m->log_time_ns, off, 0, stored.data(), stored.size()});
    }
    add_run(std::move(run));
  }

  // The (log time, inner offset) of the wanted messages of chunk c from its MessageIndex
  // records; false when the chunk has none or one is unreadable (then the whole chunk is read).
  bool indexed_messages(const ChunkRef& c, std::vector<std::pair<int64_t, uint64_t>>& indexed) {
    if (c.message_index_offsets.empty()) return false;
    std::vector<uint8_t> idx;
    for (const auto& [channel, off] : c.message_index_offsets) {
      if (!usable(channel)) continue;
      bool ok = r_.source_->read(off, wire::kRecordPrefix, idx);
      uint64_t len = 0;
      if (ok) {
        Cursor pc(idx.data(), idx.size());
        ok = pc.u8() == static_cast<uint8_t>(Opcode::kMessageIndex);
        len = pc.u64();
        ok = ok && len <= c.message_index_length &&
             r_.source_->read(off + wire::kRecordPrefix, len, idx);
      }
      Cursor ic(idx.data(), ok ? idx.size() : 0);
      if (ok && ic.u16() != channel) ok = false;
      Cursor arr = ok ? ic.sub32() : Cursor::failed();
      while (ok && arr.ok() && arr.remaining() > 0) {
        const int64_t t = wire::to_ns(arr.u64());
        const uint64_t inner = arr.u64();
        if (arr.ok() && in_range(t)) indexed.emplace_back(t, inner);
      }
      if (!ok || !arr.ok()) {
        r_.problem(off, "unreadable MessageIndex for the Chunk" + at(c.offset) +
                            "; reading the whole chunk instead");
        indexed.clear();
        return false;
      }
    }
    return true;
  }

  // Chunk c's wanted messages as a run (none read when its index says nothing is wanted).
  void load(const ChunkRef& c) {
    std::vector<std::pair<int64_t, uint64_t>> indexed;
    const bool use_index = indexed_messages(c, indexed);
    if (use_index && indexed.empty()) return;  // nothing wanted here: not even decompressed
    auto run = std::make_unique<Run>();
    if (!pool_.empty()) {
      run->storage = std::move(pool_.back());
      pool_.pop_back();
    }
    size_t records_at = 0;
    if (Status s = r_.load_chunk(c, scratch_, run->storage, &records_at); !s.ok()) {
      r_.problem(c.offset, s.message() + "; skipped");
      pool_.push_back(std::move(run->storage));
      return;
    }
    const uint8_t* base = run->storage.data() + records_at;
    const size_t n = run->storage.size() - records_at;
    // Adds the message record at `inner`; false when no whole Message record is there.
    auto add_at = [&](uint64_t inner) {
      if (inner > n || n - inner < wire::kRecordPrefix) return false;
      Cursor rc(base + inner, n - inner);
      const uint8_t op = rc.u8();
      const uint64_t len = rc.u64();
      if (len > rc.remaining() || op != static_cast<uint8_t>(Opcode::kMessage)) return false;
      auto m = parse_message(rc.pos(), static_cast<size_t>(len));
      if (!m) return false;
      if (usable(m->channel_id) && in_range(m->log_time_ns)) {
        run->entries.push_back(
            Entry{m->log_time_ns, c.offset, inner, rc.pos(), static_cast<size_t>(len)});
      }
      return true;
    };
    if (use_index) {
      run->entries.reserve(indexed.size());
      for (const auto& e : indexed) {
        if (!add_at(e.second)) {
          r_.problem(c.offset, "MessageIndex entry points at no Message (inner offset " +
                                   std::to_string(e.second) + ") in the Chunk; skipped");
        }
      }
    } else {
      uint64_t inner = 0;
      while (inner < n) {
        Cursor rc(base + inner, n - inner);
        rc.u8();
        const uint64_t len = rc.u64();
        if (!rc.ok() || len > rc.remaining()) break;  // reported when the chunk was scanned
        add_at(inner);
        inner += wire::kRecordPrefix + len;
      }
    }
    add_run(std::move(run));
  }

  McapReader& r_;
  const ReadMessageOptions& query_;
  std::vector<const Channel*> channel_by_id_;
  std::vector<const Schema*> schema_by_channel_;
  std::vector<std::unique_ptr<Run>> runs_;
  // Buffers of finished chunks, reused: fresh megabyte buffers per chunk cost page faults.
  std::vector<std::vector<uint8_t>> pool_;
  std::vector<uint8_t> scratch_;
  std::priority_queue<Run*, std::vector<Run*>, RunAfter> heap_;
};

Status McapReader::read_messages(const ReadMessageOptions& query,
                                 const std::function<bool(const MessageView&)>& on_message) {
  if (!source_) return {StatusCode::kFailedPrecondition, "reader not open"};
  MessageMerge(*this, query).run(on_message);
  return {};
}

Result<std::vector<Message>> McapReader::read_all(const ReadMessageOptions& query) {
  std::vector<Message> out;
  Status s = read_messages(query, [&](const MessageView& m) {
    out.push_back(Message{m.channel->id, m.sequence, m.log_time_ns, m.publish_time_ns,
                          std::string(m.data_view())});
    return true;
  });
  if (!s.ok()) return s;
  return out;
}

Result<Attachment> McapReader::read_attachment(const AttachmentInfo& info) {
  if (!source_) return Status(StatusCode::kFailedPrecondition, "reader not open");
  std::vector<uint8_t> buf;
  if (info.length < wire::kRecordPrefix || !source_->read(info.offset, info.length, buf)) {
    return Status(StatusCode::kCorrupt,
                  "attachment '" + info.name + "'" + at(info.offset) + " is outside the file");
  }
  Cursor c(buf.data(), buf.size());
  const uint8_t op = c.u8();
  const uint64_t len = c.u64();
  if (op != static_cast<uint8_t>(Opcode::kAttachment) || len != info.length - wire::kRecordPrefix) {
    return Status(StatusCode::kCorrupt, "no Attachment record" + at(info.offset));
  }
  uint32_t computed = 0;
  auto a =
      parse_attachment(Cursor(c.pos(), c.remaining()), options_.verify_crcs ? &computed : nullptr);
  if (!a) return Status(StatusCode::kCorrupt, "malformed Attachment record" + at(info.offset));
  if (options_.verify_crcs && a->second != 0 && computed != a->second) {
    return Status(StatusCode::kCorrupt,
                  "Attachment '" + a->first.name + "'" + at(info.offset) + " CRC mismatch");
  }
  return std::move(a->first);
}

}  // namespace fieldproof::record
