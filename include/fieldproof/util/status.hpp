// Errors as values, for every library part (docs/contributing.md, "Errors"): an operation that
// can fail returns a [[nodiscard]] Status, or a Result<T> holding either its value or the Status
// saying why there is none. The message names what failed and where (a file, an offset, a field).
//
//   Status s = write_run_record(dir, record);
//   if (!s.ok()) return s;                          // "io_error: runs/x/run.json: No space left"
//   Result<RunRecord> r = read_run_record(text);
//   if (!r.ok()) std::cerr << r.status().to_string() << '\n';
//
// Header-only: the time and lockstep headers installed with the SDK may use it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace fieldproof {

enum class StatusCode : uint8_t {
  kOk = 0,
  kInvalidArgument,     // the caller passed something the operation cannot take
  kFailedPrecondition,  // wrong state: not open, already closed
  kIoError,             // a file, a sink or a socket failed
  kNotMcap,             // the bytes are not an MCAP file (bad magic)
  kCorrupt,             // a record is malformed, a length runs past the end, a CRC mismatches
  kUnsupported,         // e.g. an unknown chunk compression, a newer schema
  kNotFound,
  kUnavailable,  // a process or a peer did not start, answer or register in time
};

inline std::string_view to_string(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kInvalidArgument:
      return "invalid_argument";
    case StatusCode::kFailedPrecondition:
      return "failed_precondition";
    case StatusCode::kIoError:
      return "io_error";
    case StatusCode::kNotMcap:
      return "not_mcap";
    case StatusCode::kCorrupt:
      return "corrupt";
    case StatusCode::kUnsupported:
      return "unsupported";
    case StatusCode::kNotFound:
      return "not_found";
    case StatusCode::kUnavailable:
      return "unavailable";
  }
  return "unknown";
}

// The outcome of an operation: ok, or a code and a message saying what and where.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status ok_status() { return {}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "ok" or "<code>: <message>".
  std::string to_string() const {
    if (ok()) return "ok";
    return std::string(fieldproof::to_string(code_)) + ": " + message_;
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// A value or the Status explaining its absence.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}         // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  const T* operator->() const { return &value(); }
  // Ok when a value is held.
  Status status() const { return ok() ? Status() : std::get<1>(v_); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace fieldproof
