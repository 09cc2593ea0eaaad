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
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>

#include "columns.h"

namespace {

using columns::Bail;
using columns::kBoolean;
using columns::kString;

constexpr double kMinTimeUs = -62135596800000000.0;
constexpr double kMaxTimeUs = 253402300799999999.0;
constexpr int kMaxNesting = 64;

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

  napi_value result(napi_env env, bool posted) { return cols_.result(env, posted); }

 private:
  const uint8_t* p_;
  const uint8_t* const end_;
  const double receivedUs_;
  const int expandDepth_;
  const Limits limits_;

  columns::ColumnSet cols_;

  // The current event.
  uint32_t fields_ = 0;
  double size_ = 0;
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

  /** A well-formed UTF-8 sequence's length at p_ (first byte >= 0x80), or Bail (JavaScript makes it U+FFFD). */
  size_t utf8Length(const uint8_t* q) const {
    size_t n = columns::utf8Sequence(q, end_);
    if (n == 0) throw Bail();
    return n;
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
    cols_.endRow(timeUs, rate);
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
      int32_t c = cols_.lookup(path_);
      columns::Column& col = cols_.at(c);
      if (col.lastRow == cols_.row()) throw Bail();  // a duplicate key, or a name given twice by nesting
      col.lastRow = cols_.row();
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
        cols_.setString(c, s);
        addField(c, vunits);
      } else if (v == 't' || v == 'f') {
        readLiteral(v == 't' ? "true" : "false");
        cols_.setNumber(c, kBoolean, v == 't' ? 1 : 0);
        addField(c, 8);
      } else if (v == 'n') {
        readLiteral("null");
      } else {
        double x = readNumber();
        cols_.setNumber(c, columns::numberKind(x), x);
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
    size_ += cols_.at(c).nameUnits + valueUnits;
    if (++fields_ > limits_.maxFields) throw Bail();
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

}  // namespace

/**
 * readBatch(body: Uint8Array, receivedUs, expandDepth, maxFields, maxEventBytes, maxStringBytes, posted)
 * → EventColumns (`posted`: in their posted form), or undefined: take the JavaScript path.
 */
napi_value ReadBatch(napi_env env, napi_callback_info info) {
  napi_value argv[7], undefined;
  const uint8_t* data;
  size_t length;
  CHECK(napi_get_undefined(env, &undefined));
  if (!columns::readerArgs(env, info, 7, argv, &data, &length, "readBatch")) return undefined;
  bool posted;
  CHECK(napi_get_value_bool(env, argv[6], &posted));
  double receivedUs, maxEventBytes;
  int32_t expandDepth;
  uint32_t maxFields, maxStringBytes;
  CHECK(napi_get_value_double(env, argv[1], &receivedUs));
  CHECK(napi_get_value_int32(env, argv[2], &expandDepth));
  CHECK(napi_get_value_uint32(env, argv[3], &maxFields));
  CHECK(napi_get_value_double(env, argv[4], &maxEventBytes));
  CHECK(napi_get_value_uint32(env, argv[5], &maxStringBytes));
  Reader reader(data, length, receivedUs, expandDepth, {maxFields, maxEventBytes, maxStringBytes});
  try {
    reader.read();
    return reader.result(env, posted);
  } catch (const Bail&) {
    return undefined;
  } catch (const std::exception&) {
    return undefined;  // out of memory: the JavaScript path reports what it can
  }
}
