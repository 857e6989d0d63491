// McapReader: reads MCAP files, the project's own and any other writer's that follows the
// specification.
//
//   McapReader r;
//   McapReaderOptions opt;
//   opt.on_problem = [](const McapProblem& p) { log(p.offset, p.message); };
//   if (Status s = r.open("recording.mcap", opt); !s.ok()) return s;   // not MCAP, unreadable
//   ReadMessageOptions q;
//   q.end_ns = 5'000'000'000;
//   q.topics = {"/odom"};
//   Status s = r.read_messages(q, [](const MessageView& m) {
//     use(m.channel->topic, m.log_time_ns, m.data);  // m.data valid during the call only
//     return true;                                   // false stops the read
//   });
//
// A complete file is opened through its footer and summary (schemas, channels, chunk indexes,
// statistics, metadata and attachment indexes) and read through the chunk and message indexes.
// A file without a summary, or cut short (a run killed mid-way), or whose summary is damaged, is
// scanned from the start instead: every complete chunk and message is recovered and whatever was
// skipped (a truncated record, a chunk whose CRC does not match, an undecodable chunk) is reported
// to on_problem with its file offset. Nothing here throws, aborts or prints; every length read
// from the file is bounds-checked.
//
// Not thread-safe: one thread per reader. The reader keeps the file open until destroyed.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fieldproof/record/mcap_types.hpp"

namespace fieldproof::record {

// Something the reader met and went past.
struct McapProblem {
  uint64_t offset = 0;  // file offset of the record concerned
  std::string message;
};
using ProblemCallback = std::function<void(const McapProblem&)>;

struct McapReaderOptions {
  // Use the footer's summary when the file has one; false always scans the data section.
  bool use_summary = true;
  // Verify the CRCs the file carries (chunks, attachments, summary, and the data section when
  // scanning); a mismatch is a problem and the record is skipped.
  bool verify_crcs = true;
  // A chunk claiming more uncompressed bytes than this is skipped as corrupt (guards memory
  // against garbage lengths).
  uint64_t max_chunk_uncompressed_size = uint64_t{1} << 30;
  // Called for each problem as it is found (may be empty; problems() keeps them all too).
  ProblemCallback on_problem;
};

struct ReadMessageOptions {
  int64_t start_ns = 0;                                  // inclusive
  int64_t end_ns = std::numeric_limits<int64_t>::max();  // exclusive
  std::vector<std::string> topics;                       // empty: every topic
};

// A message handed to read_messages' callback; data points into the reader's buffers and stays
// valid only during the call.
struct MessageView {
  const Channel* channel = nullptr;
  const Schema* schema = nullptr;  // null when the channel has no schema
  uint32_t sequence = 0;
  int64_t log_time_ns = 0;
  int64_t publish_time_ns = 0;
  std::span<const uint8_t> data;
  std::string_view data_view() const {
    return {reinterpret_cast<const char*>(data.data()), data.size()};
  }
};

// A message copied out of the file (read_all).
struct Message {
  uint16_t channel_id = 0;
  uint32_t sequence = 0;
  int64_t log_time_ns = 0;
  int64_t publish_time_ns = 0;
  std::string data;
  bool operator==(const Message&) const = default;
};

class McapReader {
 public:
  McapReader();
  ~McapReader();
  McapReader(const McapReader&) = delete;
  McapReader& operator=(const McapReader&) = delete;
  McapReader(McapReader&&) noexcept;
  McapReader& operator=(McapReader&&) noexcept;

  // Opens and indexes a file. Errors: kIoError (cannot open), kNotMcap (shorter than the magic or
  // a wrong magic). Anything after a good magic opens: damage is reported as problems and what
  // can be recovered is.
  Status open(const std::string& path, McapReaderOptions options = {});
  // The same over bytes in memory (tests, fuzzing).
  Status open_bytes(std::string bytes, McapReaderOptions options = {});

  // Messages whose log time is in [start_ns, end_ns) on the listed topics, in log-time order,
  // ties in file order. on_message returns false to stop early. Problems met (a damaged chunk)
  // go to on_problem and the read goes on; the status is kFailedPrecondition when not open,
  // kIoError when the file cannot be read.
  Status read_messages(const ReadMessageOptions& query,
                       const std::function<bool(const MessageView&)>& on_message);
  // read_messages collected into a vector.
  Result<std::vector<Message>> read_all(const ReadMessageOptions& query = {});

  // Attachment data, read and CRC-checked on demand.
  Result<Attachment> read_attachment(const AttachmentInfo& info);

  const std::string& profile() const { return profile_; }
  const std::string& library() const { return library_; }
  // True when the summary was used; false when the data section was scanned.
  bool used_summary() const { return used_summary_; }
  // True when the file ends with a valid footer and magic (it was closed properly).
  bool has_footer() const { return has_footer_; }
  const std::map<uint16_t, Schema>& schemas() const { return schemas_; }
  const std::map<uint16_t, Channel>& channels() const { return channels_; }
  // From the summary's Statistics record when there is one, else counted by the scan.
  const Statistics& statistics() const { return stats_; }
  const std::vector<Metadata>& metadata() const { return metadata_; }
  const std::vector<AttachmentInfo>& attachments() const { return attachments_; }
  // Every problem reported so far (also passed to on_problem).
  const std::vector<McapProblem>& problems() const { return problems_; }
  // Chunks indexed (summary) or recovered (scan).
  size_t chunk_count() const { return chunks_.size(); }
  uint64_t file_size() const;

  class Source;  // private: the bytes being read (file or memory)

 private:
  struct ChunkRef {
    uint64_t offset = 0;  // of the chunk record
    uint64_t length = 0;  // of the whole chunk record
    int64_t start_ns = 0;
    int64_t end_ns = 0;
    Compression compression = Compression::kNone;
    std::map<uint16_t, uint64_t> message_index_offsets;  // empty: no message indexes
    uint64_t message_index_length = 0;
  };

  class SummaryReader;  // read_summary()'s steps
  class Scanner;        // scan()'s steps
  class MessageMerge;   // one read_messages()

  Status open_source(std::unique_ptr<Source> source, McapReaderOptions options);
  void reset();
  void problem(uint64_t offset, std::string message);
  bool read_summary();
  // The Header record's length from its own fields, when its length field is damaged and the
  // record after those fields looks whole; nullopt otherwise.
  std::optional<uint64_t> header_length_from_fields() const;
  void scan();
  // Reads and decompresses a chunk: its records are records[*records_at, end). scratch holds
  // the compressed bytes (reused between calls).
  Status load_chunk(const ChunkRef& chunk, std::vector<uint8_t>& scratch,
                    std::vector<uint8_t>& records, size_t* records_at);

  McapReaderOptions options_;
  std::unique_ptr<Source> source_;
  std::string profile_;
  std::string library_;
  uint64_t data_start_ = 0;  // just after the header record
  bool used_summary_ = false;
  bool has_footer_ = false;
  std::map<uint16_t, Schema> schemas_;
  std::map<uint16_t, Channel> channels_;
  Statistics stats_;
  std::vector<Metadata> metadata_;
  std::vector<AttachmentInfo> attachments_;
  std::vector<McapProblem> problems_;
  std::vector<ChunkRef> chunks_;
  std::vector<uint64_t> loose_messages_;  // offsets of Message records outside chunks
};

}  // namespace fieldproof::record
