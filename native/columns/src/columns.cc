#include "columns.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace columns {

size_t utf8Sequence(const uint8_t* q, const uint8_t* end) {
  uint8_t c = q[0];
  auto cont = [&](size_t i) { return q + i < end && (q[i] & 0xc0) == 0x80; };
  if (c >= 0xc2 && c <= 0xdf && cont(1)) return 2;
  if (c >= 0xe0 && c <= 0xef && cont(1) && cont(2)) {
    if (c == 0xe0 && q[1] < 0xa0) return 0;  // overlong
    if (c == 0xed && q[1] >= 0xa0) return 0;  // a surrogate
    return 3;
  }
  if (c >= 0xf0 && c <= 0xf4 && cont(1) && cont(2) && cont(3)) {
    if (c == 0xf0 && q[1] < 0x90) return 0;  // overlong
    if (c == 0xf4 && q[1] >= 0x90) return 0;  // past U+10FFFF
    return 4;
  }
  return 0;
}

bool wellFormedUtf8(std::string_view s) {
  const uint8_t* q = reinterpret_cast<const uint8_t*>(s.data());
  const uint8_t* end = q + s.size();
  while (q < end) {
    if (*q < 0x80) {
      ++q;
      continue;
    }
    size_t n = utf8Sequence(q, end);
    if (n == 0) return false;
    q += n;
  }
  return true;
}

uint32_t utf16Length(std::string_view s) {
  uint32_t n = 0;
  for (unsigned char ch : s) {
    if ((ch & 0xc0) != 0x80) n++;  // a sequence's first byte
    if (ch >= 0xf0) n++;  // four bytes: two units
  }
  return n;
}

uint8_t numberKind(double x) {
  return std::trunc(x) == x && std::fabs(x) < 9223372036854775808.0 ? kInteger : kFloat;
}

int32_t ColumnSet::lookup(std::string_view name) {
  int32_t guess = prev_ >= 0 ? columns_[prev_].next : (columns_.empty() ? -1 : 0);
  int32_t c;
  if (guess >= 0 && columns_[guess].name == name) {
    c = guess;
  } else {
    std::string key(name);
    auto it = byName_.find(key);
    if (it != byName_.end()) {
      c = it->second;
    } else {
      c = static_cast<int32_t>(columns_.size());
      columns_.emplace_back();
      columns_.back().name = key;
      columns_.back().nameUnits = utf16Length(name);
      byName_.emplace(std::move(key), c);
    }
  }
  if (prev_ >= 0) columns_[prev_].next = c;
  prev_ = c;
  return c;
}

size_t ColumnSet::grow(size_t need) {
  if (need > capacity_) capacity_ = std::max(need, capacity_ * 2 + 64);
  return capacity_;
}

bool ColumnSet::touch(int32_t c, uint8_t kind) {
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
  bool fresh = col.kinds[row_] == kAbsent;
  if (fresh) col.present++;
  col.kinds[row_] = kind;
  col.mask |= 1 << kind;
  return fresh;
}

bool ColumnSet::setNumber(int32_t c, uint8_t kind, double x) {
  bool fresh = touch(c, kind);
  columns_[c].nums[row_] = x;
  return fresh;
}

bool ColumnSet::setString(int32_t c, std::string_view s) {
  bool fresh = touch(c, kString);
  Column& col = columns_[c];
  if (col.spans.size() < 2 * col.kinds.size()) col.spans.resize(2 * col.kinds.size());
  // (An empty view may have no data pointer at all, which memcmp must not be given.)
  bool repeat = col.hasLast && col.lastLength == s.size() && (s.empty() || std::memcmp(text_.data() + col.lastStart, s.data(), s.size()) == 0);
  if (!repeat) {
    if (text_.size() + s.size() > UINT32_MAX) throw Bail();
    col.hasLast = true;
    col.lastStart = static_cast<uint32_t>(text_.size());
    col.lastLength = static_cast<uint32_t>(s.size());
    if (!s.empty()) text_.append(s);
    col.spansMade++;
  }
  col.spans[2 * row_] = col.lastStart;
  col.spans[2 * row_ + 1] = col.lastStart + col.lastLength;
  return fresh;
}

void ColumnSet::endRow(double timeUs, double samplerate) {
  if (static_cast<size_t>(row_) >= timeUs_.size()) {
    timeUs_.resize(grow(row_ + 1));
    samplerate_.resize(timeUs_.size());
  }
  timeUs_[row_] = timeUs;
  samplerate_[row_] = samplerate;
  ++row_;
  prev_ = -1;
}

bool readerArgs(napi_env env, napi_callback_info info, size_t n, napi_value* argv, const uint8_t** body, size_t* length, const char* name) {
  size_t argc = n;
  if (napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr) != napi_ok || argc < n) return false;
  napi_typedarray_type type;
  size_t offset;
  void* data;
  napi_value ab;
  if (napi_get_typedarray_info(env, argv[0], &type, length, &data, &ab, &offset) != napi_ok || type != napi_uint8_array) {
    napi_throw_type_error(env, nullptr, (std::string(name) + ": body must be a Uint8Array").c_str());
    return false;
  }
  *body = static_cast<const uint8_t*>(data);
  return true;
}

napi_value typedArray(napi_env env, napi_typedarray_type type, const void* data, size_t count, size_t width) {
  void* bytes;
  napi_value buffer, array;
  CHECK(napi_create_arraybuffer(env, count * width, &bytes, &buffer));
  if (count) std::memcpy(bytes, data, count * width);
  CHECK(napi_create_typedarray(env, type, count, buffer, 0, &array));
  return array;
}

napi_value ColumnSet::result(napi_env env) {
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

}  // namespace columns
