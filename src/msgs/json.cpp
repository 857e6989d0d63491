#include "fieldproof/msgs/json.hpp"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "fieldproof/msgs/schema.hpp"
#include "fieldproof/msgs/stamp.hpp"

namespace fieldproof::msgs {

namespace pb = google::protobuf;
using nlohmann::json;

namespace {

// Unset sub-messages are printed as their defaults down to this depth (a recursive type would
// otherwise never end); deeper ones as {}.
constexpr int kMaxDefaultDepth = 8;

std::string base64(const std::string& bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t v = (static_cast<uint8_t>(bytes[i]) << 16) |
                       (static_cast<uint8_t>(bytes[i + 1]) << 8) |
                       static_cast<uint8_t>(bytes[i + 2]);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (i + 1 == bytes.size()) {
    const uint32_t v = static_cast<uint8_t>(bytes[i]) << 16;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == bytes.size()) {
    const uint32_t v =
        (static_cast<uint8_t>(bytes[i]) << 16) | (static_cast<uint8_t>(bytes[i + 1]) << 8);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

// A float as the double of its shortest decimal form (0.1f prints 0.1, not 0.10000000149).
double float_value(float f) {
  if (!std::isfinite(f)) return static_cast<double>(f);
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf - 1, f);
  *r.ptr = '\0';
  return std::strtod(buf, nullptr);
}

json message_json(const pb::Message& m, int depth);

json scalar(const pb::Message& m, const pb::Reflection* r, const pb::FieldDescriptor* f,
            int depth) {
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32:
      return r->GetInt32(m, f);
    case pb::FieldDescriptor::CPPTYPE_INT64:
      return r->GetInt64(m, f);
    case pb::FieldDescriptor::CPPTYPE_UINT32:
      return r->GetUInt32(m, f);
    case pb::FieldDescriptor::CPPTYPE_UINT64:
      return r->GetUInt64(m, f);
    case pb::FieldDescriptor::CPPTYPE_DOUBLE:
      return r->GetDouble(m, f);
    case pb::FieldDescriptor::CPPTYPE_FLOAT:
      return float_value(r->GetFloat(m, f));
    case pb::FieldDescriptor::CPPTYPE_BOOL:
      return r->GetBool(m, f);
    case pb::FieldDescriptor::CPPTYPE_ENUM: {
      const pb::EnumValueDescriptor* e = r->GetEnum(m, f);
      return e ? json(e->name()) : json(r->GetEnumValue(m, f));
    }
    case pb::FieldDescriptor::CPPTYPE_STRING: {
      std::string scratch;
      const std::string& s = r->GetStringReference(m, f, &scratch);
      return f->type() == pb::FieldDescriptor::TYPE_BYTES ? json(base64(s)) : json(s);
    }
    case pb::FieldDescriptor::CPPTYPE_MESSAGE:
      if (!r->HasField(m, f) && depth >= kMaxDefaultDepth) return json::object();
      return message_json(r->GetMessage(m, f), depth + 1);
  }
  return nullptr;
}

json repeated(const pb::Message& m, const pb::Reflection* r, const pb::FieldDescriptor* f, int i,
              int depth) {
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32:
      return r->GetRepeatedInt32(m, f, i);
    case pb::FieldDescriptor::CPPTYPE_INT64:
      return r->GetRepeatedInt64(m, f, i);
    case pb::FieldDescriptor::CPPTYPE_UINT32:
      return r->GetRepeatedUInt32(m, f, i);
    case pb::FieldDescriptor::CPPTYPE_UINT64:
      return r->GetRepeatedUInt64(m, f, i);
    case pb::FieldDescriptor::CPPTYPE_DOUBLE:
      return r->GetRepeatedDouble(m, f, i);
    case pb::FieldDescriptor::CPPTYPE_FLOAT:
      return float_value(r->GetRepeatedFloat(m, f, i));
    case pb::FieldDescriptor::CPPTYPE_BOOL:
      return r->GetRepeatedBool(m, f, i);
    case pb::FieldDescriptor::CPPTYPE_ENUM: {
      const pb::EnumValueDescriptor* e = r->GetRepeatedEnum(m, f, i);
      return e ? json(e->name()) : json(r->GetRepeatedEnumValue(m, f, i));
    }
    case pb::FieldDescriptor::CPPTYPE_STRING: {
      std::string scratch;
      const std::string& s = r->GetRepeatedStringReference(m, f, i, &scratch);
      return f->type() == pb::FieldDescriptor::TYPE_BYTES ? json(base64(s)) : json(s);
    }
    case pb::FieldDescriptor::CPPTYPE_MESSAGE:
      return message_json(r->GetRepeatedMessage(m, f, i), depth + 1);
  }
  return nullptr;
}

json message_json(const pb::Message& m, int depth) {
  json out = json::object();
  const pb::Descriptor* d = m.GetDescriptor();
  const pb::Reflection* r = m.GetReflection();
  for (int k = 0; k < d->field_count(); ++k) {
    const pb::FieldDescriptor* f = d->field(k);
    if (f->is_map()) {
      json obj = json::object();
      const pb::FieldDescriptor* key = f->message_type()->map_key();
      const pb::FieldDescriptor* value = f->message_type()->map_value();
      for (int i = 0; i < r->FieldSize(m, f); ++i) {
        const pb::Message& entry = r->GetRepeatedMessage(m, f, i);
        const json kj = scalar(entry, entry.GetReflection(), key, depth + 1);
        obj[kj.is_string() ? kj.get<std::string>() : kj.dump()] =
            scalar(entry, entry.GetReflection(), value, depth + 1);
      }
      out[f->name()] = std::move(obj);
    } else if (f->is_repeated()) {
      json arr = json::array();
      const int n = r->FieldSize(m, f);
      for (int i = 0; i < n; ++i) arr.push_back(repeated(m, r, f, i, depth));
      out[f->name()] = std::move(arr);
    } else if (f->real_containing_oneof() != nullptr && !r->HasField(m, f)) {
      continue;  // another member of the oneof is the one set
    } else {
      out[f->name()] = scalar(m, r, f, depth);
    }
  }
  return out;
}

// header.stamp {sec, nsec}, when both are set.
std::optional<SimTime> stamp_of(const pb::Message& m) {
  const pb::Descriptor* d = m.GetDescriptor();
  const pb::FieldDescriptor* h = d->FindFieldByName("header");
  if (h == nullptr || h->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE || h->is_repeated()) {
    return std::nullopt;
  }
  const pb::Reflection* r = m.GetReflection();
  if (!r->HasField(m, h)) return std::nullopt;
  const pb::Message& header = r->GetMessage(m, h);
  const pb::FieldDescriptor* s = header.GetDescriptor()->FindFieldByName("stamp");
  if (s == nullptr || s->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE || s->is_repeated()) {
    return std::nullopt;
  }
  const pb::Reflection* hr = header.GetReflection();
  if (!hr->HasField(header, s)) return std::nullopt;
  const pb::Message& stamp = hr->GetMessage(header, s);
  const pb::Descriptor* sd = stamp.GetDescriptor();
  const pb::FieldDescriptor* sec = sd->FindFieldByName("sec");
  const pb::FieldDescriptor* nsec = sd->FindFieldByName("nsec");
  if (sec == nullptr || nsec == nullptr || sec->cpp_type() != pb::FieldDescriptor::CPPTYPE_INT64 ||
      nsec->cpp_type() != pb::FieldDescriptor::CPPTYPE_INT32) {
    return std::nullopt;
  }
  const pb::Reflection* sr = stamp.GetReflection();
  return from_sec_nsec(sr->GetInt64(stamp, sec), sr->GetInt32(stamp, nsec));
}

}  // namespace

struct Decoder::Impl {
  // One scratch message per type, reused (Clear + Parse) for every payload of that type.
  std::map<std::string, std::unique_ptr<pb::Message>, std::less<>> scratch;

  pb::Message* message_for(std::string_view type) {
    auto it = scratch.find(type);
    if (it != scratch.end()) return it->second.get();
    const pb::Descriptor* d =
        pb::DescriptorPool::generated_pool()->FindMessageTypeByName(std::string(type));
    std::unique_ptr<pb::Message> m;
    if (d != nullptr) {
      const pb::Message* proto = pb::MessageFactory::generated_factory()->GetPrototype(d);
      if (proto != nullptr) m.reset(proto->New());
    }
    pb::Message* raw = m.get();
    scratch.emplace(std::string(type), std::move(m));
    return raw;
  }
};

Decoder::Decoder() : impl_(std::make_unique<Impl>()) {
  // Links the generated types in (schema.cpp names each descriptor) so the pool knows them.
  (void)known_types();
}
Decoder::~Decoder() = default;

bool Decoder::knows(std::string_view type) { return impl_->message_for(type) != nullptr; }

Decoded Decoder::decode(std::string_view type, std::string_view payload, bool want_json) {
  Decoded out;
  pb::Message* m = impl_->message_for(type);
  if (m == nullptr) {
    out.error = "unknown message type '" + std::string(type) + "'";
    return out;
  }
  m->Clear();
  if (!m->ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    out.error = "the payload is not a valid " + std::string(type);
    return out;
  }
  out.ok = true;
  out.stamp = stamp_of(*m);
  if (want_json) out.json = message_json(*m, 0);
  return out;
}

}  // namespace fieldproof::msgs
