// A /1/batch body (a JSON array of {data, time?, samplerate?} items) read straight from its
// bytes into the columns src/stores/events/columns.ts describes, without making a JavaScript
// value per event: the native half of src/ingest/batch.ts's fast path. String values come back
// as one buffer of UTF-8 bytes (the spans count bytes), which moves to the JavaScript thread
// without a copy and into DuckDB's vectors without becoming JavaScript strings.
//
// It only takes bodies it can read exactly as the JavaScript path would (JSON.parse, then
// normalise.ts, then ColumnsBuilder). Anything else returns undefined and the caller takes the
// JavaScript path, which then gives the same columns, refusals or errors it always did:
// invalid JSON or UTF-8, an item that is not an object or whose data is not one, a duplicate
// key, a key of digits only (V8 orders those first), a lone surrogate escape, an array, an
// object deeper than expand_json_depth, a time other than a number, null, "" or the
// `YYYY-MM-DDTHH:MM:SS(.fraction)Z` form, a samplerate other than null or a positive integer,
// and any event at or near a limit.
#include <node_api.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace {

constexpr uint8_t kAbsent = 0, kString = 1, kInteger = 2, kFloat = 3, kBoolean = 4;
constexpr double kMinTimeUs = -62135596800000000.0;
constexpr double kMaxTimeUs = 253402300799999999.0;
constexpr int kMaxNesting = 64;
/**
 * Most values (columns × rows) held: every column has a slot in every row. A body past it (rows
 * each naming new fields, many times over) is left to the JavaScript path, which refuses it as
 * too large (MAX_VALUES_PER_REQUEST in src/stores/events/columns.ts).
 */
constexpr size_t kMaxCells = size_t{1} << 25;

/** Bytes a string holds as they are: printable ASCII but the quote and the backslash. */
constexpr struct PlainBytes {
  bool at[256];
  constexpr PlainBytes() : at() {
    for (int c = 0x20; c < 0x80; c++) at[c] = c != '"' && c != '\\';
  }
  constexpr bool operator[](uint8_t c) const { return at[c]; }
} kPlain;

struct Limits {
  uint32_t maxFields;
  double maxEventBytes;
  uint32_t maxStringBytes;
};

/** A field's values across the body's events (FieldColumn), or a name seen only as an object. */
struct Column {
  std::string name;
  /** The name's length in UTF-16 units (what normalise.ts counts toward an event's size). */
  uint32_t nameUnits = 0;
  std::vector<uint8_t> kinds;
  std::vector<double> nums;
  std::vector<uint32_t> spans;
  int mask = 0;
  uint32_t present = 0;
  /** The row this name was last given in: a second key of the same name in one event bails. */
  int64_t lastRow = -1;
  bool ordered = false;
  /** The last string given (as bytes of the text), to share its text when the next repeats it. */
  bool hasLast = false;
  uint32_t lastStart = 0, lastLength = 0;
  uint32_t spansMade = 0;
  /** The column named after this one in the last event: tried before the hash lookup. */
  int32_t next = -1;
};

struct Bail {};

class Reader {
 public:
  Reader(const uint8_t* p, size_t n, double receivedUs, int expandDepth, Limits limits)
      : p_(p), end_(p + n), receivedUs_(receivedUs), expandDepth_(expandDepth), limits_(limits) {}

  /** Reads the whole body; throws Bail where the JavaScript path must decide. */
  void read() {
    ws();
    expect('[');
    ws();
    if (peek() == ']') throw Bail();  // "the batch has no events": the JavaScript path says so
    for (;;) {
      readItem();
      ws();
      if (peek() == ',') {
        ++p_;
        ws();
        continue;
      }
      expect(']');
      break;
    }
    ws();
    if (p_ != end_) throw Bail();
  }

  napi_value result(napi_env env);

 private:
  const uint8_t* p_;
  const uint8_t* const end_;
  const double receivedUs_;
  const int expandDepth_;
  const Limits limits_;

  std::vector<Column> columns_;
  std::unordered_map<std::string, int32_t> byName_;
  /** Columns in the order they were first given a value (ColumnsBuilder's order). */
  std::vector<int32_t> order_;
  std::vector<double> timeUs_, samplerate_;
  std::string text_;  // every string value, UTF-8 (the spans count its bytes)
  int64_t row_ = 0;
  size_t capacity_ = 0;
  size_t cells_ = 0;

  // The current event.
  uint32_t fields_ = 0;
  double size_ = 0;
  int32_t prev_ = -1;
  std::string path_;  // the prefix of the object being read ("a.b.")
  std::string scratch_;  // a string with escapes, decoded

  uint8_t peek() const { return p_ < end_ ? *p_ : 0; }
  void expect(uint8_t c) {
    if (peek() != c) throw Bail();
    ++p_;
  }
  void ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }

  /**
   * A JSON string at p_ (at its quote): its bytes as UTF-8 and its length in UTF-16 units.
   * Without escapes the view is into the body; with them, into scratch_.
   */
  std::string_view readString(uint32_t& units) {
    expect('"');
    const uint8_t* start = p_;
    units = 0;
    bool escaped = false;
    scratch_.clear();
    for (;;) {
      // A run of printable ASCII other than the quote and the backslash: most of most strings.
      const uint8_t* q = p_;
      while (q < end_ && kPlain[*q]) ++q;
      units += static_cast<uint32_t>(q - p_);
      if (escaped) scratch_.append(reinterpret_cast<const char*>(p_), q - p_);
      p_ = q;
      if (p_ >= end_) throw Bail();
      uint8_t c = *p_;
      if (c == '"') break;
      if (c < 0x20) throw Bail();
      if (c == '\\') {
        if (!escaped) {
          scratch_.assign(reinterpret_cast<const char*>(start), p_ - start);
          escaped = true;
        }
        readEscape(units);
        continue;
      }
      size_t len = utf8Length(p_);
      units += len == 4 ? 2 : 1;
      if (escaped) scratch_.append(reinterpret_cast<const char*>(p_), len);
      p_ += len;
    }
    std::string_view s = escaped ? std::string_view(scratch_)
                                 : std::string_view(reinterpret_cast<const char*>(start), p_ - start);
    ++p_;
    return s;
  }

  /** A well-formed UTF-8 sequence's length at q (first byte >= 0x80), or Bail. */
  size_t utf8Length(const uint8_t* q) const {
    uint8_t c = q[0];
    auto cont = [&](size_t i) { return q + i < end_ && (q[i] & 0xc0) == 0x80; };
    if (c >= 0xc2 && c <= 0xdf && cont(1)) return 2;
    if (c >= 0xe0 && c <= 0xef && cont(1) && cont(2)) {
      if (c == 0xe0 && q[1] < 0xa0) throw Bail();  // overlong
      if (c == 0xed && q[1] >= 0xa0) throw Bail();  // a surrogate
      return 3;
    }
    if (c >= 0xf0 && c <= 0xf4 && cont(1) && cont(2) && cont(3)) {
      if (c == 0xf0 && q[1] < 0x90) throw Bail();  // overlong
      if (c == 0xf4 && q[1] >= 0x90) throw Bail();  // past U+10FFFF
      return 4;
    }
    throw Bail();  // the JavaScript path makes it U+FFFD
  }

  void readEscape(uint32_t& units) {
    ++p_;  // the backslash
    if (p_ >= end_) throw Bail();
    uint8_t c = *p_++;
    char simple = 0;
    switch (c) {
      case '"': simple = '"'; break;
      case '\\': simple = '\\'; break;
      case '/': simple = '/'; break;
      case 'b': simple = '\b'; break;
      case 'f': simple = '\f'; break;
      case 'n': simple = '\n'; break;
      case 'r': simple = '\r'; break;
      case 't': simple = '\t'; break;
      case 'u': break;
      default: throw Bail();
    }
    if (simple) {
      scratch_.push_back(simple);
      ++units;
      return;
    }
    uint32_t cp = hex4();
    if (cp >= 0xd800 && cp <= 0xdbff) {
      // A high surrogate: only with its low partner (alone, it is made U+FFFD in JavaScript).
      if (end_ - p_ < 6 || p_[0] != '\\' || p_[1] != 'u') throw Bail();
      p_ += 2;
      uint32_t lo = hex4();
      if (lo < 0xdc00 || lo > 0xdfff) throw Bail();
      cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
    } else if (cp >= 0xdc00 && cp <= 0xdfff) {
      throw Bail();
    }
    units += cp >= 0x10000 ? 2 : 1;
    appendUtf8(scratch_, cp);
  }

  uint32_t hex4() {
    if (end_ - p_ < 4) throw Bail();
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
      uint8_t c = *p_++;
      v <<= 4;
      if (c >= '0' && c <= '9') v |= c - '0';
      else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
      else throw Bail();
    }
    return v;
  }

  static void appendUtf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xc0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
      out.push_back(static_cast<char>(0xe0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else {
      out.push_back(static_cast<char>(0xf0 | (cp >> 18)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    }
  }

  /** A JSON number, as JSON.parse reads it (the nearest double; std::from_chars rounds so). */
  double readNumber() {
    const uint8_t* start = p_;
    if (peek() == '-') ++p_;
    if (peek() == '0') {
      ++p_;
    } else if (peek() >= '1' && peek() <= '9') {
      while (peek() >= '0' && peek() <= '9') ++p_;
    } else {
      throw Bail();
    }
    bool simple = true;
    if (peek() == '.') {
      simple = false;
      ++p_;
      if (!(peek() >= '0' && peek() <= '9')) throw Bail();
      while (peek() >= '0' && peek() <= '9') ++p_;
    }
    if (peek() == 'e' || peek() == 'E') {
      simple = false;
      ++p_;
      if (peek() == '+' || peek() == '-') ++p_;
      if (!(peek() >= '0' && peek() <= '9')) throw Bail();
      while (peek() >= '0' && peek() <= '9') ++p_;
    }
    const char* s = reinterpret_cast<const char*>(start);
    size_t n = p_ - start;
    bool negative = *s == '-';
    if (simple && n - negative <= 15) {
      // An integer of up to 15 digits is exact in a double.
      double v = 0;
      for (size_t i = negative; i < n; i++) v = v * 10 + (s[i] - '0');
      return negative ? -v : v;
    }
    double v;
    auto r = std::from_chars(s, s + n, v);
    if (r.ec == std::errc::result_out_of_range) {
      // Too large: JSON.parse gives ±Infinity (a field then left out, a time refused); too
      // small: ±0, which from_chars does not give.
      throw Bail();
    }
    if (r.ec != std::errc() || r.ptr != s + n) throw Bail();
    return v;
  }

  void readLiteral(const char* word) {
    size_t n = std::strlen(word);
    if (static_cast<size_t>(end_ - p_) < n || std::memcmp(p_, word, n) != 0) throw Bail();
    p_ += n;
  }

  /** Skips (and checks) any JSON value: an item's keys other than data, time and samplerate. */
  void skipValue(int depth) {
    if (depth > kMaxNesting) throw Bail();
    uint8_t c = peek();
    if (c == '"') {
      uint32_t units;
      readString(units);
    } else if (c == '{' || c == '[') {
      uint8_t close = c == '{' ? '}' : ']';
      ++p_;
      ws();
      if (peek() == close) {
        ++p_;
        return;
      }
      for (;;) {
        if (c == '{') {
          uint32_t units;
          readString(units);
          ws();
          expect(':');
          ws();
        }
        skipValue(depth + 1);
        ws();
        if (peek() == ',') {
          ++p_;
          ws();
          continue;
        }
        expect(close);
        return;
      }
    } else if (c == 't') {
      readLiteral("true");
    } else if (c == 'f') {
      readLiteral("false");
    } else if (c == 'n') {
      readLiteral("null");
    } else {
      readNumber();
    }
  }

  enum class Scalar { None, String, Number, True, False, Null, Object };

  /** One batch item: its data's fields into the current row, then its time and sample rate. */
  void readItem() {
    expect('{');
    ws();
    bool sawData = false, sawTime = false, sawRate = false;
    double timeUs = receivedUs_, rate = 1;
    fields_ = 0;
    size_ = 0;
    prev_ = -1;
    if (peek() != '}') {
      for (;;) {
        uint32_t units;
        std::string_view key = readString(units);
        ws();
        expect(':');
        ws();
        if (key == "data") {
          if (sawData || peek() != '{') throw Bail();
          sawData = true;
          path_.clear();
          readObject(expandDepth_, 1);
        } else if (key == "time") {
          if (sawTime) throw Bail();
          sawTime = true;
          timeUs = readTime();
        } else if (key == "samplerate") {
          if (sawRate) throw Bail();
          sawRate = true;
          rate = readSamplerate();
        } else {
          skipValue(1);
        }
        ws();
        if (peek() == ',') {
          ++p_;
          ws();
          continue;
        }
        break;
      }
    }
    expect('}');
    if (!sawData) throw Bail();
    if (size_ > limits_.maxEventBytes) throw Bail();
    if (static_cast<size_t>(row_) >= timeUs_.size()) {
      timeUs_.resize(grow(row_ + 1));
      samplerate_.resize(timeUs_.size());
    }
    timeUs_[row_] = timeUs;
    samplerate_[row_] = rate;
    ++row_;
  }

  size_t grow(size_t need) {
    if (need > capacity_) capacity_ = std::max(need, capacity_ * 2 + 64);
    return capacity_;
  }

  /** An object's fields, flattened under path_ (normalise.ts's flatten). */
  void readObject(int depthLeft, int nesting) {
    if (nesting > kMaxNesting) throw Bail();
    expect('{');
    ws();
    if (peek() == '}') {
      ++p_;
      return;
    }
    const size_t prefix = path_.size();
    for (;;) {
      uint32_t units;
      std::string_view key = readString(units);
      if (key.empty() || isDigits(key)) throw Bail();
      path_.resize(prefix);
      path_.append(key);
      int32_t c = lookup();
      Column& col = columns_[c];
      if (col.lastRow == row_) throw Bail();  // a duplicate key, or a name given twice by nesting
      col.lastRow = row_;
      ws();
      expect(':');
      ws();
      uint8_t v = peek();
      if (v == '{') {
        if (depthLeft <= 0) throw Bail();  // kept as a JSON string: the JavaScript path writes it
        path_.push_back('.');
        readObject(depthLeft - 1, nesting + 1);
      } else if (v == '[') {
        throw Bail();
      } else if (v == '"') {
        uint32_t vunits;
        std::string_view s = readString(vunits);
        if (s.size() > limits_.maxStringBytes) throw Bail();
        setString(c, s);
        addField(c, vunits);
      } else if (v == 't' || v == 'f') {
        readLiteral(v == 't' ? "true" : "false");
        setNumber(c, kBoolean, v == 't' ? 1 : 0);
        addField(c, 8);
      } else if (v == 'n') {
        readLiteral("null");
      } else {
        double x = readNumber();
        bool integer = std::trunc(x) == x && std::fabs(x) < 9223372036854775808.0;
        setNumber(c, integer ? kInteger : kFloat, x);
        addField(c, 8);
      }
      ws();
      if (peek() == ',') {
        ++p_;
        ws();
        continue;
      }
      expect('}');
      path_.resize(prefix);
      return;
    }
  }

  static bool isDigits(std::string_view s) {
    for (char ch : s)
      if (ch < '0' || ch > '9') return false;
    return true;
  }

  void addField(int32_t c, uint32_t valueUnits) {
    // normalise.ts counts name.length + the value's length (8 for others), in UTF-16 units.
    size_ += columns_[c].nameUnits + valueUnits;
    if (++fields_ > limits_.maxFields) throw Bail();
  }

  static uint32_t utf16Length(std::string_view s) {
    uint32_t n = 0;
    for (unsigned char ch : s) {
      if ((ch & 0xc0) != 0x80) n++;  // a sequence's first byte
      if (ch >= 0xf0) n++;  // four bytes: two units
    }
    return n;
  }

  /** The column named path_, made when new; the last event's order is tried first. */
  int32_t lookup() {
    int32_t guess = prev_ >= 0 ? columns_[prev_].next : (columns_.empty() ? -1 : 0);
    int32_t c;
    if (guess >= 0 && columns_[guess].name == path_) {
      c = guess;
    } else {
      auto it = byName_.find(path_);
      if (it != byName_.end()) {
        c = it->second;
      } else {
        c = static_cast<int32_t>(columns_.size());
        columns_.emplace_back();
        columns_.back().name = path_;
        columns_.back().nameUnits = utf16Length(path_);
        byName_.emplace(path_, c);
      }
    }
    if (prev_ >= 0) columns_[prev_].next = c;
    prev_ = c;
    return c;
  }

  Column& touch(int32_t c, uint8_t kind) {
    Column& col = columns_[c];
    if (!col.ordered) {
      col.ordered = true;
      order_.push_back(c);
    }
    if (col.kinds.size() <= static_cast<size_t>(row_)) {
      size_t n = grow(row_ + 1);
      cells_ += n - col.kinds.size();
      if (cells_ > kMaxCells) throw Bail();
      col.kinds.resize(n);
      col.nums.resize(n);
      if (!col.spans.empty()) col.spans.resize(2 * n);
    }
    col.kinds[row_] = kind;
    col.mask |= 1 << kind;
    col.present++;
    return col;
  }

  void setNumber(int32_t c, uint8_t kind, double x) { touch(c, kind).nums[row_] = x; }

  void setString(int32_t c, std::string_view s) {
    Column& col = touch(c, kString);
    if (col.spans.size() < 2 * col.kinds.size()) col.spans.resize(2 * col.kinds.size());
    if (!(col.hasLast && col.lastLength == s.size() && std::memcmp(text_.data() + col.lastStart, s.data(), s.size()) == 0)) {
      if (text_.size() + s.size() > UINT32_MAX) throw Bail();
      col.hasLast = true;
      col.lastStart = static_cast<uint32_t>(text_.size());
      col.lastLength = static_cast<uint32_t>(s.size());
      text_.append(s);
      col.spansMade++;
    }
    col.spans[2 * row_] = col.lastStart;
    col.spans[2 * row_ + 1] = col.lastStart + col.lastLength;
  }

  /** `time`: null, "", a number (epoch s/ms/µs/ns) or the common RFC 3339 UTC form. */
  double readTime() {
    uint8_t c = peek();
    if (c == 'n') {
      readLiteral("null");
      return receivedUs_;
    }
    if (c == '"') {
      uint32_t units;
      std::string_view s = readString(units);
      if (s.empty()) return receivedUs_;
      return utcZ(s);
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      double n = readNumber();
      double a = std::fabs(n);
      double us = a < 1e11 ? n * 1e6 : a < 1e14 ? n * 1e3 : a < 1e17 ? n : n / 1e3;
      us = std::trunc(us);
      if (!(us >= kMinTimeUs && us <= kMaxTimeUs)) throw Bail();
      return us;
    }
    throw Bail();
  }

  /** normalise.ts's parseUtcZ: `YYYY-MM-DDTHH:MM:SS(.d{1,9})?Z`, read to the microsecond. */
  static double utcZ(std::string_view s) {
    size_t n = s.size();
    if (n < 20 || n > 30 || s[n - 1] != 'Z') throw Bail();
    auto digit = [&](size_t i) -> int {
      if (s[i] < '0' || s[i] > '9') throw Bail();
      return s[i] - '0';
    };
    if (s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':') throw Bail();
    int y = digit(0) * 1000 + digit(1) * 100 + digit(2) * 10 + digit(3);
    int mo = digit(5) * 10 + digit(6);
    int d = digit(8) * 10 + digit(9);
    int h = digit(11) * 10 + digit(12);
    int mi = digit(14) * 10 + digit(15);
    int sec = digit(17) * 10 + digit(18);
    if (n == 20) {
      // no fraction
    } else {
      if (s[19] != '.' || n < 22) throw Bail();
      for (size_t i = 20; i < n - 1; i++) digit(i);
    }
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (mo < 1 || mo > 12 || d < 1 || d > (mo == 2 && leap ? 29 : days[mo - 1])) throw Bail();
    if (h > 23 || mi > 59 || sec > 59) throw Bail();  // Date.parse's own rules: leave them to it
    // Days since 1970-01-01 (Howard Hinnant's days_from_civil).
    int yy = mo <= 2 ? y - 1 : y;
    int era = (yy >= 0 ? yy : yy - 399) / 400;
    int yoe = yy - era * 400;
    int doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    double days1970 = static_cast<double>(era) * 146097 + doe - 719468;
    double ms = ((days1970 * 24 + h) * 60 + mi) * 60000 + sec * 1000.0;
    double fraction = 0;
    double scale = 100000;
    for (size_t i = 20; i < 26 && i < n - 1; i++, scale /= 10) fraction += (s[i] - '0') * scale;
    double us = ms * 1000 + fraction;
    if (!(us >= kMinTimeUs && us <= kMaxTimeUs)) throw Bail();
    return us;
  }

  /** `samplerate`: null or a positive safe integer (strings go the JavaScript way). */
  double readSamplerate() {
    if (peek() == 'n') {
      readLiteral("null");
      return 1;
    }
    double n = readNumber();
    if (!(n >= 1 && n <= 9007199254740991.0 && std::trunc(n) == n)) throw Bail();
    return n;
  }
};

#define CHECK(call)                              \
  do {                                           \
    if ((call) != napi_ok) return nullptr;       \
  } while (0)

napi_value typedArray(napi_env env, napi_typedarray_type type, const void* data, size_t count, size_t width) {
  void* bytes;
  napi_value buffer, array;
  CHECK(napi_create_arraybuffer(env, count * width, &bytes, &buffer));
  if (count) std::memcpy(bytes, data, count * width);
  CHECK(napi_create_typedarray(env, type, count, buffer, 0, &array));
  return array;
}

napi_value Reader::result(napi_env env) {
  const size_t rows = static_cast<size_t>(row_);
  if (order_.size() * rows > kMaxCells) throw Bail();
  napi_value out, fields, value;
  CHECK(napi_create_object(env, &out));
  CHECK(napi_create_uint32(env, static_cast<uint32_t>(rows), &value));
  CHECK(napi_set_named_property(env, out, "count", value));
  timeUs_.resize(rows);
  samplerate_.resize(rows);
  CHECK(napi_set_named_property(env, out, "timeUs", typedArray(env, napi_float64_array, timeUs_.data(), rows, 8)));
  CHECK(napi_set_named_property(env, out, "samplerate", typedArray(env, napi_float64_array, samplerate_.data(), rows, 8)));
  CHECK(napi_create_array(env, &fields));
  uint32_t k = 0;
  for (int32_t c : order_) {
    Column& col = columns_[c];
    if (col.present == 0) continue;
    col.kinds.resize(rows);
    col.nums.resize(rows);
    napi_value f;
    CHECK(napi_create_object(env, &f));
    CHECK(napi_create_string_utf8(env, col.name.data(), col.name.size(), &value));
    CHECK(napi_set_named_property(env, f, "name", value));
    CHECK(napi_set_named_property(env, f, "kinds", typedArray(env, napi_uint8_array, col.kinds.data(), rows, 1)));
    CHECK(napi_create_int32(env, col.mask, &value));
    CHECK(napi_set_named_property(env, f, "mask", value));
    CHECK(napi_create_uint32(env, col.present, &value));
    CHECK(napi_set_named_property(env, f, "present", value));
    CHECK(napi_set_named_property(env, f, "nums", typedArray(env, napi_float64_array, col.nums.data(), rows, 8)));
    if (col.mask & (1 << kString)) {
      col.spans.resize(2 * rows);
      CHECK(napi_set_named_property(env, f, "spans", typedArray(env, napi_uint32_array, col.spans.data(), 2 * rows, 4)));
    }
    bool constant = col.present == rows && col.mask == (1 << kString) && col.spansMade == 1;
    CHECK(napi_get_boolean(env, constant, &value));
    CHECK(napi_set_named_property(env, f, "constant", value));
    CHECK(napi_set_element(env, fields, k++, f));
  }
  CHECK(napi_set_named_property(env, out, "fields", fields));
  // As bytes: moved to the JavaScript thread without a copy, and from there into DuckDB's
  // vectors without becoming JavaScript strings.
  CHECK(napi_set_named_property(env, out, "text", typedArray(env, napi_uint8_array, text_.data(), text_.size(), 1)));
  return out;
}

/**
 * readBatch(body: Uint8Array, receivedUs, expandDepth, maxFields, maxEventBytes, maxStringBytes)
 * → EventColumns, or undefined: take the JavaScript path.
 */
napi_value ReadBatch(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value argv[6];
  CHECK(napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr));
  napi_value undefined;
  CHECK(napi_get_undefined(env, &undefined));
  if (argc < 6) return undefined;
  napi_typedarray_type type;
  size_t length, offset;
  void* data;
  napi_value ab;
  if (napi_get_typedarray_info(env, argv[0], &type, &length, &data, &ab, &offset) != napi_ok || type != napi_uint8_array) {
    napi_throw_type_error(env, nullptr, "readBatch: body must be a Uint8Array");
    return nullptr;
  }
  double receivedUs, maxEventBytes;
  int32_t expandDepth;
  uint32_t maxFields, maxStringBytes;
  CHECK(napi_get_value_double(env, argv[1], &receivedUs));
  CHECK(napi_get_value_int32(env, argv[2], &expandDepth));
  CHECK(napi_get_value_uint32(env, argv[3], &maxFields));
  CHECK(napi_get_value_double(env, argv[4], &maxEventBytes));
  CHECK(napi_get_value_uint32(env, argv[5], &maxStringBytes));
  Reader reader(static_cast<const uint8_t*>(data), length, receivedUs, expandDepth, {maxFields, maxEventBytes, maxStringBytes});
  try {
    reader.read();
    return reader.result(env);
  } catch (const Bail&) {
    return undefined;
  } catch (const std::exception&) {
    return undefined;  // out of memory: the JavaScript path reports what it can
  }
}

napi_value Init(napi_env env, napi_value exports) {
  napi_value fn;
  CHECK(napi_create_function(env, "readBatch", NAPI_AUTO_LENGTH, ReadBatch, nullptr, &fn));
  CHECK(napi_set_named_property(env, exports, "readBatch", fn));
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
