// McapWriter: writes an MCAP file (https://mcap.dev/spec) with chunks (zstd, lz4 or none),
// message indexes, and a summary (schemas, channels, chunk / attachment / metadata indexes,
// statistics, summary offsets) so indexed readers and Foxglove open it directly.
//
//   McapWriterOptions opt;
//   opt.compression = Compression::kZstd;
//   McapWriter w(opt);
//   if (Status s = w.open("run/recording.mcap"); !s.ok()) return s;
//   auto schema = w.add_schema("fieldproof.Event", "jsonschema", R"({"type":"object"})");
//   auto channel = w.add_channel("/fieldproof/events", "json", *schema, {});
//   Status s = w.write(*channel, 0, SimTime::from_ns(10), SimTime::from_ns(10), R"({"a":1})");
//   s = w.close();  // data end, summary, footer; the file is complete only after this
//
// Durability: a chunk is written and the sink flushed when it reaches chunk_size bytes and when
// close_chunk() is called, so after a crash the file reads back (McapReader's scan) up to the last
// closed chunk. Memory: the writer holds at most one open chunk (chunk_size + one message) plus
// the summary's index entries (one per chunk, attachment and metadata record).
//
// Not thread-safe: one thread writes (the recorder serialises its inputs).
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fieldproof/record/mcap_types.hpp"
#include "fieldproof/time/duration.hpp"

namespace fieldproof::record {

namespace detail {
class Compressor;
}  // namespace detail

struct McapWriterOptions {
  // The header's profile: "" (none) or a well-known one such as "ros2"; custom ones start "x-".
  std::string profile;
  // The header's free-form library string (writer name and version).
  std::string library = "fieldproof-mcap/0.1";
  // Compression of each chunk's records.
  Compression compression = Compression::kZstd;
  // A chunk is closed (compressed, written, flushed) once its uncompressed records reach this
  // many bytes. Bounds the writer's memory. Must be at least 1 and at most 2 GiB.
  uint64_t chunk_size = 1024 * 1024;
  // zstd level (1..19; 0 uses the library default) or lz4 frame level (0 fast .. 12); ignored
  // for Compression::kNone.
  int compression_level = 1;
  // Write a Message Index record per channel after each chunk (indexed readers need them).
  bool write_message_indexes = true;
  // Write a Chunk Index record per chunk in the summary (time-range reads without a scan).
  bool write_chunk_indexes = true;
  // Write the Statistics record in the summary.
  bool write_statistics = true;
  // Write Summary Offset records pointing at each group of summary records.
  bool write_summary_offsets = true;
  // Compute CRC32s: chunk records, attachments, the data section and the summary. Off stores 0
  // ("not available"), which readers then skip.
  bool enable_crcs = true;

  // Ok, or kInvalidArgument naming the field.
  Status validate() const;
};

// Where the writer's bytes go. The writer calls write() with each piece in file order and flush()
// after each closed chunk and at close(). Errors are returned, never thrown.
class McapSink {
 public:
  virtual ~McapSink() = default;
  virtual Status write(const uint8_t* data, size_t size) = 0;
  virtual Status flush() = 0;
  virtual Status close() { return flush(); }
};

// A sink over a file opened (created or truncated) at path; flush() reaches the kernel (fflush),
// so data survives the process being killed.
Result<std::unique_ptr<McapSink>> open_file_sink(const std::string& path);
// A sink over a std::ostream the caller keeps alive until the writer is closed or destroyed.
std::unique_ptr<McapSink> make_ostream_sink(std::ostream& out);

class McapWriter {
 public:
  explicit McapWriter(McapWriterOptions options = {});
  // Closes the file if it is still open (status dropped: call close() to see it).
  ~McapWriter();
  McapWriter(const McapWriter&) = delete;
  McapWriter& operator=(const McapWriter&) = delete;

  // Creates (truncates) the file and writes the magic and header. kInvalidArgument when the
  // options do not validate, kIoError when the file cannot be created, kFailedPrecondition when
  // already open.
  Status open(const std::string& path);
  Status open(std::ostream& out);
  Status open(std::unique_ptr<McapSink> sink);

  // Declares a schema; returns its id (1, 2, ...). The record goes to the data section at once.
  Result<uint16_t> add_schema(std::string_view name, std::string_view encoding,
                              std::string_view data);
  // Declares a channel on a schema (0 = none, else an id from add_schema); returns its id (0, 1,
  // ...). kInvalidArgument for an unknown schema id or more than 65535 channels.
  Result<uint16_t> add_channel(std::string_view topic, std::string_view message_encoding,
                               uint16_t schema_id, const KeyValueMap& metadata = {});

  // Appends a message to the open chunk; closes the chunk when it reaches chunk_size.
  // kInvalidArgument for an undeclared channel or a negative time.
  Status write(uint16_t channel_id, uint32_t sequence, SimTime log_time, SimTime publish_time,
               std::span<const uint8_t> data);
  Status write(uint16_t channel_id, uint32_t sequence, SimTime log_time, SimTime publish_time,
               std::string_view data);

  // A Metadata record (outside chunks), indexed in the summary.
  Status write_metadata(std::string_view name, const KeyValueMap& metadata);
  // An Attachment record (outside chunks), indexed in the summary.
  Status write_attachment(std::string_view name, std::string_view content_type, SimTime log_time,
                          SimTime create_time, std::span<const uint8_t> data);
  Status write_attachment(const Attachment& attachment);

  // Writes the open chunk (if it holds anything) with its message indexes and flushes the sink,
  // so everything written so far survives a crash. The recorder calls this at least once a
  // second of wall time.
  Status close_chunk();

  // Closes the chunk, writes the Data End (with the data section CRC), the summary, the summary
  // offsets, the footer and the magic, flushes and closes the sink. Idempotent once closed.
  Status close();

  bool is_open() const { return sink_ != nullptr; }
  // Bytes of uncompressed records held in the open chunk: at most chunk_size + one message
  // record after any write() returns.
  uint64_t buffered_bytes() const { return chunk_.size(); }
  // Bytes written to the sink so far (the file offset of the next record).
  uint64_t bytes_written() const { return offset_; }
  // The statistics so far (complete after close()).
  Statistics statistics() const;
  const McapWriterOptions& options() const { return options_; }

 private:
  struct ChunkIndexEntry {
    int64_t start_ns = 0;
    int64_t end_ns = 0;
    uint64_t chunk_offset = 0;
    uint64_t chunk_length = 0;
    std::map<uint16_t, uint64_t> message_index_offsets;
    uint64_t message_index_length = 0;
    uint64_t compressed_size = 0;
    uint64_t uncompressed_size = 0;
  };
  struct MetadataIndexEntry {
    uint64_t offset = 0;
    uint64_t length = 0;
    std::string name;
  };

  Status put(const uint8_t* data, size_t size);
  Status put(const std::vector<uint8_t>& bytes) { return put(bytes.data(), bytes.size()); }
  Status write_chunk();
  Status write_summary_and_footer();
  Status fail(Status s);  // remembers the first I/O error: later calls return it

  McapWriterOptions options_;
  std::unique_ptr<McapSink> sink_;
  bool closed_ = false;
  Status sticky_error_;
  uint64_t offset_ = 0;
  uint32_t data_crc_ = 0;  // running CRC32 of every byte of the data section so far
  bool in_data_section_ = true;

  std::vector<Schema> schemas_;    // index = id - 1
  std::vector<Channel> channels_;  // index = id
  Statistics stats_;

  // The open chunk.
  std::vector<uint8_t> chunk_;
  int64_t chunk_start_ns_ = 0;
  int64_t chunk_end_ns_ = 0;
  // Per channel id: (log_time, offset in chunk_) of each message of the open chunk.
  std::vector<std::vector<std::pair<int64_t, uint64_t>>> chunk_message_index_;
  std::vector<uint64_t> channel_counts_;  // messages per channel id, for the statistics
  std::vector<uint8_t> compressed_;       // reused between chunks
  std::vector<uint8_t> scratch_;          // reused record buffer
  std::unique_ptr<detail::Compressor> compressor_;

  std::vector<ChunkIndexEntry> chunk_indexes_;
  std::vector<AttachmentInfo> attachment_indexes_;
  std::vector<MetadataIndexEntry> metadata_indexes_;
};

}  // namespace fieldproof::record
