// An OTLP ExportTraceServiceRequest in protobuf, read straight from its bytes into each
// dataset's event columns (columns.h): the native half of src/ingest/otlp/request.ts's fast
// path for traces, the way json_batch.cc is for /1/batch. It reads the wire format as
// src/ingest/otlp/decode-proto.ts does (the same fields, a known field of another wire type
// skipped, the last of a repeated scalar winning, a message field given twice merged where
// that file merges it) and writes the rows src/ingest/otlp/traces.ts writes, field by field in
// the same order, so that the columns are the same.
//
// It only takes requests it can read exactly so. Anything else returns undefined and the
// JavaScript path decides, with its own errors and partial success: malformed protobuf,
// invalid UTF-8, attribute values that are arrays, key-value lists or bytes (their flattening
// and JSON text stay in JavaScript), a `sampleRate` or `SampleRate` attribute anywhere, a trace
// state (its sample-rate threshold), a service name with non-ASCII at either end, an integer
// beyond 2^53, a time beyond 2^53 microseconds, and any event at or over a limit.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "columns.h"

namespace {

using columns::Bail;
using columns::kBoolean;
using columns::kString;

constexpr double kTwo53 = 9007199254740992.0;

/** An attribute value (AnyValue) of the kinds read here; arrays, lists and bytes bail. */
struct Value {
  enum Type : uint8_t { None, String, Bool, Int, Double } type = None;
  std::string_view str;
  double num = 0;
};

struct KeyValue {
  std::string_view key;
  Value value;
};

/** [begin, end) of a flat vector: the attributes, events or spans of one parent. */
struct Range {
  uint32_t begin = 0, end = 0;
  uint32_t size() const { return end - begin; }
};

/** Nanoseconds since the epoch as whole microseconds and the nanoseconds left (model.ts). */
struct Nanos {
  double us = 0, ns = 0;
  bool zero() const { return us == 0 && ns == 0; }
  bool before(const Nanos& b) const { return us < b.us || (us == b.us && ns < b.ns); }
};

/** Float milliseconds from a to b, computed as traces.ts computes them. */
double msBetween(const Nanos& a, const Nanos& b) { return ((b.us - a.us) * 1000 + (b.ns - a.ns)) / 1e6; }

struct Event {
  Nanos time;
  std::string_view name;
  Range attrs;
};

struct Link {
  std::string_view traceId, spanId;  // raw bytes
  Range attrs;
};

struct Span {
  std::string_view traceId, spanId, parentSpanId, traceState, name, statusMessage;
  uint32_t kind = 0, statusCode = 0;
  Nanos start, end;
  Range attrs, events, links;
};

struct Scope {
  std::string_view name, version, schemaUrl;
  Range attrs, spans;
};

struct Resource {
  std::string_view schemaUrl;
  Range attrs, scopes;
};

struct Limits {
  uint32_t maxFields;
  double maxEventBytes;
  uint32_t maxStringBytes;
};

/** One dataset's rows (OtlpGroup). */
struct Group {
  std::string dataset;
  columns::ColumnSet cols;
  std::vector<uint32_t> rowItem;
};

/** Scope names that mark instrumentation libraries (rows.ts's list, Honeycomb's). */
const char* const kInstrumentationPrefixes[] = {
    "io.opentelemetry",
    "opentelemetry.instrumentation",
    "OpenTelemetry.Instrumentation",
    "OpenTelemetry::Instrumentation",
    "go.opentelemetry.io/contrib/instrumentation",
    "@opentelemetry/instrumentation",
    "io.opentelemetry.contrib.php",
    "github.com/open-telemetry/opentelemetry-collector",
    "@honeycombio/",
};

const char* const kSpanKinds[] = {"unspecified", "internal", "server", "client", "producer", "consumer"};
constexpr uint32_t kStatusError = 2;

class Reader {
 public:
  Reader(const uint8_t* p, size_t n, Limits limits) : buf_(p), size_(n), limits_(limits) {}

  /** Decodes the request; throws Bail where the JavaScript path must decide. */
  void read() {
    pos_ = 0;
    while (pos_ < size_) {
      uint32_t tag = varint(size_);
      if (tag == 0x0a) resourceSpans(delimited(size_));
      else skip(tag & 7, size_);
    }
  }

  /** Each resource's spans as rows of its dataset (`fixedDataset`: a classic key's, for all). */
  void translate(const std::string* fixedDataset);

  napi_value result(napi_env env, bool posted);

 private:
  const uint8_t* const buf_;
  const size_t size_;
  const Limits limits_;
  size_t pos_ = 0;

  std::vector<KeyValue> resourceKvs_, scopeKvs_, spanKvs_, eventKvs_, linkKvs_;
  std::vector<Resource> resources_;
  std::vector<Scope> scopes_;
  std::vector<Span> spans_;
  std::vector<Event> events_;
  std::vector<Link> links_;

  std::vector<Group> groups_;
  // The row under way.
  Group* group_ = nullptr;
  uint32_t fields_ = 0;
  double bytes_ = 0;
  std::string hex_;

  // --- the wire format (decode-proto.ts)

  /** A varint of up to 32 bits (tags, lengths, enums); longer or wider ones bail. */
  uint32_t varint(size_t end) {
    uint32_t v = 0;
    for (int shift = 0; shift < 35; shift += 7) {
      if (pos_ >= end) throw Bail();
      uint8_t b = buf_[pos_++];
      if (shift == 28 && b > 0x0f) throw Bail();  // past 32 bits: decode-proto.ts keeps the low ones
      v |= static_cast<uint32_t>(b & 0x7f) << shift;
      if (b < 0x80) return v;
    }
    throw Bail();
  }

  /** A 64-bit varint; a tenth byte other than 0 or 1 bails (decode-proto.ts reads those its own way). */
  uint64_t varint64(size_t end) {
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (pos_ >= end) throw Bail();
      uint8_t b = buf_[pos_++];
      if (shift == 63 && b > 1) throw Bail();
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (b < 0x80) return v;
    }
    throw Bail();
  }

  size_t delimited(size_t end) {
    uint32_t len = varint(end);
    if (len > end - pos_) throw Bail();
    return pos_ + len;
  }

  size_t need(size_t n, size_t end) {
    if (n > end - pos_) throw Bail();
    size_t at = pos_;
    pos_ += n;
    return at;
  }

  uint64_t fixed64(size_t end) {
    size_t at = need(8, end);
    uint64_t v;
    std::memcpy(&v, buf_ + at, 8);  // little-endian, as every machine Node runs on here
    return v;
  }

  Nanos nanos(size_t end) {
    uint64_t n = fixed64(end);
    Nanos t;
    uint64_t us = n / 1000;
    if (static_cast<double>(us) >= kTwo53) throw Bail();
    t.us = static_cast<double>(us);
    t.ns = static_cast<double>(n % 1000);
    return t;
  }

  void skip(uint32_t wireType, size_t end) {
    switch (wireType) {
      case 0: varint64(end); return;
      case 1: need(8, end); return;
      case 2: pos_ = delimited(end); return;
      case 5: need(4, end); return;
      default: throw Bail();
    }
  }

  std::string_view bytes(size_t end) {
    size_t e = delimited(end);
    std::string_view s(reinterpret_cast<const char*>(buf_ + pos_), e - pos_);
    pos_ = e;
    return s;
  }

  std::string_view string(size_t end) {
    std::string_view s = bytes(end);
    if (!columns::wellFormedUtf8(s)) throw Bail();  // JavaScript makes it U+FFFD
    return s;
  }

  Value anyValue(size_t end) {
    Value v;
    while (pos_ < end) {
      uint32_t tag = varint(end);
      switch (tag) {
        case 0x0a:
          v.type = Value::String;
          v.str = string(end);
          break;
        case 0x10:
          v.type = Value::Bool;
          v.num = varint64(end) != 0 ? 1 : 0;
          break;
        case 0x18: {
          int64_t x = static_cast<int64_t>(varint64(end));
          if (x > 9007199254740992LL || x < -9007199254740992LL) throw Bail();
          v.type = Value::Int;
          v.num = static_cast<double>(x);
          break;
        }
        case 0x21: {
          size_t at = need(8, end);
          std::memcpy(&v.num, buf_ + at, 8);
          v.type = Value::Double;
          break;
        }
        case 0x2a:
        case 0x32:
        case 0x3a:
          throw Bail();  // an array, a key-value list, bytes: JSON text and flattening in JavaScript
        default:
          skip(tag & 7, end);
      }
    }
    return v;
  }

  void keyValue(size_t end, std::vector<KeyValue>& out) {
    KeyValue kv;
    while (pos_ < end) {
      uint32_t tag = varint(end);
      if (tag == 0x0a) {
        kv.key = string(end);
      } else if (tag == 0x12) {
        size_t e = delimited(end);
        kv.value = anyValue(e);
      } else {
        skip(tag & 7, end);
      }
    }
    // A sample rate (any level's) is JavaScript's to read.
    if (kv.key == "sampleRate" || kv.key == "SampleRate") throw Bail();
    out.push_back(kv);
  }

  /** A repeated KeyValue field into `out`, the range growing (its entries stay together). */
  void attribute(size_t end, std::vector<KeyValue>& out, Range& r) {
    if (r.size() == 0) r.begin = r.end = static_cast<uint32_t>(out.size());
    keyValue(delimited(end), out);
    r.end = static_cast<uint32_t>(out.size());
  }

  void resourceSpans(size_t end) {
    Resource res;
    res.scopes.begin = res.scopes.end = static_cast<uint32_t>(scopes_.size());
    while (pos_ < end) {
      uint32_t tag = varint(end);
      if (tag == 0x0a) {
        size_t e = delimited(end);
        while (pos_ < e) {
          uint32_t t = varint(e);
          if (t == 0x0a) attribute(e, resourceKvs_, res.attrs);
          else skip(t & 7, e);
        }
      } else if (tag == 0x12) {
        scopeSpans(delimited(end));
        res.scopes.end = static_cast<uint32_t>(scopes_.size());
      } else if (tag == 0x1a) {
        res.schemaUrl = string(end);
      } else {
        skip(tag & 7, end);
      }
    }
    resources_.push_back(res);
  }

  void scopeSpans(size_t end) {
    Scope sc;
    sc.spans.begin = sc.spans.end = static_cast<uint32_t>(spans_.size());
    while (pos_ < end) {
      uint32_t tag = varint(end);
      if (tag == 0x0a) {
        // A scope given twice: the later one, whole (decode-proto.ts replaces it).
        size_t e = delimited(end);
        sc.name = sc.version = std::string_view();
        sc.attrs = Range();
        while (pos_ < e) {
          uint32_t t = varint(e);
          if (t == 0x0a) sc.name = string(e);
          else if (t == 0x12) sc.version = string(e);
          else if (t == 0x1a) attribute(e, scopeKvs_, sc.attrs);
          else skip(t & 7, e);
        }
      } else if (tag == 0x12) {
        span(delimited(end));
        sc.spans.end = static_cast<uint32_t>(spans_.size());
      } else if (tag == 0x1a) {
        sc.schemaUrl = string(end);
      } else {
        skip(tag & 7, end);
      }
    }
    scopes_.push_back(sc);
  }

  void span(size_t end) {
    Span s;
    s.events.begin = s.events.end = static_cast<uint32_t>(events_.size());
    s.links.begin = s.links.end = static_cast<uint32_t>(links_.size());
    while (pos_ < end) {
      uint32_t tag = varint(end);
      switch (tag) {
        case 0x0a: s.traceId = bytes(end); break;
        case 0x12: s.spanId = bytes(end); break;
        case 0x1a: s.traceState = string(end); break;
        case 0x22: s.parentSpanId = bytes(end); break;
        case 0x2a: s.name = string(end); break;
        case 0x30: s.kind = varint(end); break;
        case 0x39: s.start = nanos(end); break;
        case 0x41: s.end = nanos(end); break;
        case 0x4a: attribute(end, spanKvs_, s.attrs); break;
        case 0x5a:
          spanEvent(delimited(end));
          s.events.end = static_cast<uint32_t>(events_.size());
          break;
        case 0x6a:
          spanLink(delimited(end));
          s.links.end = static_cast<uint32_t>(links_.size());
          break;
        case 0x7a: {
          size_t e = delimited(end);
          while (pos_ < e) {
            uint32_t t = varint(e);
            if (t == 0x12) s.statusMessage = string(e);
            else if (t == 0x18) s.statusCode = varint(e);
            else skip(t & 7, e);
          }
          break;
        }
        default:
          skip(tag & 7, end);
      }
    }
    spans_.push_back(s);
  }

  void spanEvent(size_t end) {
    Event ev;
    while (pos_ < end) {
      uint32_t tag = varint(end);
      if (tag == 0x09) ev.time = nanos(end);
      else if (tag == 0x12) ev.name = string(end);
      else if (tag == 0x1a) attribute(end, eventKvs_, ev.attrs);
      else skip(tag & 7, end);
    }
    events_.push_back(ev);
  }

  void spanLink(size_t end) {
    Link l;
    while (pos_ < end) {
      uint32_t tag = varint(end);
      if (tag == 0x0a) l.traceId = bytes(end);
      else if (tag == 0x12) l.spanId = bytes(end);
      else if (tag == 0x22) attribute(end, linkKvs_, l.attrs);
      else skip(tag & 7, end);
    }
    links_.push_back(l);
  }

  // --- rows (traces.ts, rows.ts, attributes.ts)

  /** Rows.set: the per-event limits counted as rows.ts counts them (UTF-16 units). */
  void setString(std::string_view name, std::string_view s) {
    if (s.size() > limits_.maxStringBytes) throw Bail();
    int32_t c = group_->cols.lookup(name);
    bytes_ += group_->cols.at(c).nameUnits + columns::utf16Length(s);
    if (group_->cols.setString(c, s) && ++fields_ > limits_.maxFields) throw Bail();
  }

  void setNumber(std::string_view name, uint8_t kind, double x) {
    int32_t c = group_->cols.lookup(name);
    bytes_ += group_->cols.at(c).nameUnits + 8;
    if (group_->cols.setNumber(c, kind, x) && ++fields_ > limits_.maxFields) throw Bail();
  }

  void setNumber(std::string_view name, double x) { setNumber(name, columns::numberKind(x), x); }
  void setBool(std::string_view name, bool b) { setNumber(name, kBoolean, b ? 1 : 0); }

  /** addValue for the kinds read here: non-finite doubles are left out. */
  void setValue(std::string_view name, const Value& v) {
    switch (v.type) {
      case Value::String: setString(name, v.str); break;
      case Value::Bool: setBool(name, v.num != 0); break;
      case Value::Int: setNumber(name, v.num); break;
      case Value::Double:
        if (std::isfinite(v.num)) setNumber(name, v.num);
        break;
      case Value::None: break;
    }
  }

  /** addAttributes: entries with an empty key or no value skipped (sample rates bailed on reading). */
  void setAttributes(const std::vector<KeyValue>& kvs, Range r) {
    for (uint32_t i = r.begin; i < r.end; i++) {
      const KeyValue& kv = kvs[i];
      if (kv.key.empty() || kv.value.type == Value::None) continue;
      setValue(kv.key, kv.value);
    }
  }

  void endRow(double timeUs, uint32_t item) {
    if (bytes_ > limits_.maxEventBytes) throw Bail();
    group_->cols.endRow(timeUs, 1);
    group_->rowItem.push_back(item);
    fields_ = 0;
    bytes_ = 0;
  }

  /** Lowercase hex of id bytes (decode-proto.ts's hex), into hex_. */
  std::string_view hex(std::string_view id) {
    static const char digits[] = "0123456789abcdef";
    hex_.resize(2 * id.size());
    for (size_t i = 0; i < id.size(); i++) {
      uint8_t b = static_cast<uint8_t>(id[i]);
      hex_[2 * i] = digits[b >> 4];
      hex_[2 * i + 1] = digits[b & 15];
    }
    return hex_;
  }

  /** rows.ts's traceIdText: 16 bytes whose first 8 are zero are stored as the last 8. */
  std::string_view traceIdText(std::string_view id) {
    if (id.size() == 16 && std::memcmp(id.data(), "\0\0\0\0\0\0\0\0", 8) == 0) return hex(id.substr(8));
    return hex(id);
  }

  void resourceAndScope(const Resource& res, const Scope& sc) {
    setAttributes(resourceKvs_, res.attrs);
    if (!res.schemaUrl.empty()) setString("resource.schema_url", res.schemaUrl);
    if (!sc.name.empty()) {
      setString("library.name", sc.name);
      for (const char* p : kInstrumentationPrefixes) {
        if (sc.name.substr(0, std::strlen(p)) == p) {
          setBool("telemetry.instrumentation_library", true);
          break;
        }
      }
    }
    if (!sc.version.empty()) setString("library.version", sc.version);
    setAttributes(scopeKvs_, sc.attrs);
    if (!sc.schemaUrl.empty()) setString("scope.schema_url", sc.schemaUrl);
  }

  /** traces.ts's commonFields. */
  void commonFields(const Span& s, std::string_view parentId, std::string_view parentName, const char* annotation) {
    setString("trace.trace_id", traceIdText(s.traceId));
    if (!parentId.empty()) setString("trace.parent_id", hex(parentId));
    if (!parentName.empty()) setString("parent_name", parentName);
    if (annotation) setString("meta.annotation_type", annotation);
    setString("meta.signal_type", "trace");
    if (s.statusCode == kStatusError) setBool("error", true);
  }

  void spanRows(const Resource& res, const Scope& sc, const Span& s, uint32_t item);
  std::string datasetOf(const Resource& res) const;
};

void Reader::spanRows(const Resource& res, const Scope& sc, const Span& s, uint32_t item) {
  const Event* exception = nullptr;
  for (uint32_t e = s.events.begin; e < s.events.end; e++) {
    const Event& ev = events_[e];
    if (!exception && ev.name == "exception") exception = &ev;
    resourceAndScope(res, sc);
    commonFields(s, s.spanId, s.name, "span_event");
    setString("name", ev.name);
    double sinceStart = 0;
    bool invalid = false;
    if (!ev.time.zero() && !s.start.zero()) {
      if (ev.time.before(s.start)) invalid = true;
      else sinceStart = msBetween(s.start, ev.time);
    }
    setNumber("meta.time_since_span_start_ms", sinceStart);
    if (invalid) setBool("meta.invalid_time_since_span_start", true);
    setAttributes(eventKvs_, ev.attrs);
    endRow(ev.time.us, item);
  }
  for (uint32_t l = s.links.begin; l < s.links.end; l++) {
    const Link& link = links_[l];
    resourceAndScope(res, sc);
    commonFields(s, s.spanId, s.name, "link");
    if (!link.traceId.empty()) setString("trace.link.trace_id", traceIdText(link.traceId));
    if (!link.spanId.empty()) setString("trace.link.span_id", hex(link.spanId));
    setAttributes(linkKvs_, link.attrs);
    endRow(s.start.us, item);
  }
  if (exception) {
    // The first exception event's message, type and stack trace (strings) and escaped (a boolean).
    for (uint32_t i = exception->attrs.begin; i < exception->attrs.end; i++) {
      const KeyValue& kv = eventKvs_[i];
      if (kv.value.type == Value::String && (kv.key == "exception.message" || kv.key == "exception.type" || kv.key == "exception.stacktrace")) {
        setString(kv.key, kv.value.str);
      } else if (kv.value.type == Value::Bool && kv.key == "exception.escaped") {
        setBool(kv.key, kv.value.num != 0);
      }
    }
  }
  resourceAndScope(res, sc);
  commonFields(s, s.parentSpanId, std::string_view(), nullptr);
  setString("name", s.name);
  setString("trace.span_id", hex(s.spanId));
  setNumber("status_code", s.statusCode);
  if (!s.statusMessage.empty()) setString("status_message", s.statusMessage);
  setNumber("span.num_events", s.events.size());
  setNumber("span.num_links", s.links.size());
  const char* kind = s.kind < 6 ? kSpanKinds[s.kind] : "unspecified";
  setString("span.kind", kind);
  setString("type", kind);
  double duration = 0;
  bool invalid = false;
  if (!s.start.zero() && !s.end.zero()) {
    if (s.end.before(s.start)) invalid = true;
    else duration = msBetween(s.start, s.end);
  }
  setNumber("duration_ms", duration);
  if (invalid) setBool("meta.invalid_duration", true);
  setAttributes(spanKvs_, s.attrs);
  endRow(s.start.us, item);
}

/** datasets.ts's tracesDataset for an environment key: the trimmed service name, or unknown_service. */
std::string Reader::datasetOf(const Resource& res) const {
  // The service name is the last `service.name` attribute set (a string, or another kind: none).
  const Value* service = nullptr;
  for (uint32_t i = res.attrs.begin; i < res.attrs.end; i++) {
    const KeyValue& kv = resourceKvs_[i];
    if (kv.key != "service.name" || kv.value.type == Value::None) continue;
    if (kv.value.type == Value::Double && !std::isfinite(kv.value.num)) continue;
    service = &kv.value;
  }
  if (!service || service->type != Value::String) return "unknown_service";
  std::string_view name = service->str;
  if (!name.empty() && (static_cast<uint8_t>(name.front()) >= 0x80 || static_cast<uint8_t>(name.back()) >= 0x80)) {
    throw Bail();  // JavaScript's trim() knows Unicode's spaces
  }
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; };
  while (!name.empty() && space(name.front())) name.remove_prefix(1);
  while (!name.empty() && space(name.back())) name.remove_suffix(1);
  if (name.empty() || name.substr(0, 15) == "unknown_service") return "unknown_service";
  return std::string(name);
}

void Reader::translate(const std::string* fixedDataset) {
  uint32_t item = 0;
  for (const Resource& res : resources_) {
    // A trace state carries a sampling threshold: JavaScript reads it.
    for (uint32_t c = res.scopes.begin; c < res.scopes.end; c++) {
      for (uint32_t i = scopes_[c].spans.begin; i < scopes_[c].spans.end; i++) {
        if (!spans_[i].traceState.empty()) throw Bail();
      }
    }
    std::string dataset = fixedDataset ? *fixedDataset : datasetOf(res);
    group_ = nullptr;
    for (Group& g : groups_) {
      if (g.dataset == dataset) group_ = &g;
    }
    if (!group_) {
      groups_.emplace_back();
      group_ = &groups_.back();
      group_->dataset = dataset;
    }
    for (uint32_t c = res.scopes.begin; c < res.scopes.end; c++) {
      const Scope& sc = scopes_[c];
      for (uint32_t i = sc.spans.begin; i < sc.spans.end; i++) spanRows(res, sc, spans_[i], item++);
    }
  }
}

napi_value Reader::result(napi_env env, bool posted) {
  napi_value out, groups, value;
  CHECK(napi_create_object(env, &out));
  CHECK(napi_create_uint32(env, static_cast<uint32_t>(spans_.size()), &value));
  CHECK(napi_set_named_property(env, out, "items", value));
  CHECK(napi_create_array(env, &groups));
  uint32_t k = 0;
  for (Group& g : groups_) {
    if (g.cols.row() == 0) continue;
    napi_value group;
    CHECK(napi_create_object(env, &group));
    CHECK(napi_create_string_utf8(env, g.dataset.data(), g.dataset.size(), &value));
    CHECK(napi_set_named_property(env, group, "dataset", value));
    napi_value cols = g.cols.result(env, posted);
    if (!cols) return nullptr;
    CHECK(napi_set_named_property(env, group, "columns", cols));
    CHECK(napi_set_named_property(env, group, "rowItem", columns::typedArray(env, napi_uint32_array, g.rowItem.data(), g.rowItem.size(), 4)));
    CHECK(napi_set_element(env, groups, k++, group));
  }
  CHECK(napi_set_named_property(env, out, "groups", groups));
  return out;
}

}  // namespace

/**
 * readTraces(body: Uint8Array, dataset: string | undefined, maxFields, maxEventBytes, maxStringBytes, posted)
 * → { items, groups: [{ dataset, columns, rowItem }] } (`posted`: columns in their posted form),
 * or undefined: take the JavaScript path.
 * `dataset`: a classic key's dataset, for every span; undefined: each resource's service name.
 */
napi_value ReadTraces(napi_env env, napi_callback_info info) {
  napi_value argv[6], undefined;
  const uint8_t* data;
  size_t length;
  CHECK(napi_get_undefined(env, &undefined));
  if (!columns::readerArgs(env, info, 6, argv, &data, &length, "readTraces")) return undefined;
  bool posted;
  CHECK(napi_get_value_bool(env, argv[5], &posted));
  napi_valuetype datasetType;
  CHECK(napi_typeof(env, argv[1], &datasetType));
  std::string fixed;
  if (datasetType == napi_string) {
    size_t n;
    CHECK(napi_get_value_string_utf8(env, argv[1], nullptr, 0, &n));
    fixed.resize(n + 1);
    CHECK(napi_get_value_string_utf8(env, argv[1], fixed.data(), n + 1, &n));
    fixed.resize(n);
  }
  double maxEventBytes;
  uint32_t maxFields, maxStringBytes;
  CHECK(napi_get_value_uint32(env, argv[2], &maxFields));
  CHECK(napi_get_value_double(env, argv[3], &maxEventBytes));
  CHECK(napi_get_value_uint32(env, argv[4], &maxStringBytes));
  Reader reader(data, length, {maxFields, maxEventBytes, maxStringBytes});
  try {
    reader.read();
    reader.translate(datasetType == napi_string ? &fixed : nullptr);
    return reader.result(env, posted);
  } catch (const Bail&) {
    return undefined;
  } catch (const std::exception&) {
    return undefined;  // out of memory: the JavaScript path reports what it can
  }
}
