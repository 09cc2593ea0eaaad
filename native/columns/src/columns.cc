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

namespace {

/** A name's hash: eight bytes at a time, each mixed in by a multiply (names are short; any good mix will do). */
uint64_t nameHash(std::string_view s) {
  constexpr uint64_t kMul = 0x9e3779b97f4a7c15ULL;
  uint64_t h = s.size() * kMul;
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * kMul;
    h ^= h >> 29;
  }
  if (i < s.size()) {
    uint64_t w = 0;
    std::memcpy(&w, s.data() + i, s.size() - i);
    h = (h ^ w) * kMul;
    h ^= h >> 29;
  }
  return h ^ (h >> 32);
}

}  // namespace

int32_t ColumnSet::lookup(std::string_view name) {
  int32_t guess = prev_ >= 0 ? columns_[prev_].next : (columns_.empty() ? -1 : 0);
  int32_t c = -1;
  if (guess >= 0 && nameOf(columns_[guess]) == name) {
    c = guess;
  } else {
    const uint64_t h = nameHash(name);
    if (!index_.empty()) {
      const size_t mask = index_.size() - 1;
      for (size_t i = h & mask;; i = (i + 1) & mask) {
        const Slot& slot = index_[i];
        if (slot.column < 0) break;
        if (slot.hash == h && nameOf(columns_[slot.column]) == name) {
          c = slot.column;
          break;
        }
      }
    }
    if (c < 0) {
      c = static_cast<int32_t>(columns_.size());
      columns_.emplace_back();
      Column& col = columns_.back();
      if (names_.size() + name.size() > UINT32_MAX) throw Bail();
      col.nameAt = static_cast<uint32_t>(names_.size());
      col.nameLength = static_cast<uint32_t>(name.size());
      names_.append(name);
      col.hash = h;
      col.nameUnits = utf16Length(name);
      indexColumn(c);
    }
  }
  if (prev_ >= 0) columns_[prev_].next = c;
  prev_ = c;
  return c;
}

void ColumnSet::indexColumn(int32_t c) {
  if (2 * columns_.size() > index_.size()) {
    size_t n = 64;
    while (n < 4 * columns_.size()) n <<= 1;
    index_.assign(n, Slot{0, -1});
    for (int32_t k = 0; k < c; k++) indexColumn(k);
  }
  const size_t mask = index_.size() - 1;
  const uint64_t h = columns_[c].hash;
  size_t i = h & mask;
  while (index_[i].column >= 0) i = (i + 1) & mask;
  index_[i] = Slot{h, c};
}

size_t ColumnSet::grow(size_t need) {
  if (need > capacity_) capacity_ = std::max(need, capacity_ * 2 + 64);
  return capacity_;
}

size_t ColumnSet::touch(int32_t c, uint8_t kind, bool* fresh) {
  Column& col = columns_[c];
  if (!col.ordered) {
    col.ordered = true;
    order_.push_back(c);
  }
  size_t slot;
  if (col.sparse) {
    const uint32_t n = col.present;
    *fresh = !(n > 0 && col.rows[n - 1] == static_cast<uint32_t>(row_));
    if (*fresh) {
      if (col.kinds.size() <= n) {
        // (16 at first: a wide request's many fields in a few percent of its events grow less often.)
        size_t size = std::max<size_t>(16, 2 * col.kinds.size());
        cells_ += size - col.kinds.size();
        if (cells_ > kMaxCells) throw Bail();
        col.rows.resize(size);
        col.kinds.resize(size);
        col.nums.resize(size);
        if (!col.spans.empty()) col.spans.resize(2 * size);
      }
      col.rows[n] = static_cast<uint32_t>(row_);
      col.present++;
      slot = n;
    } else {
      slot = n - 1;
    }
  } else {
    if (col.kinds.size() <= static_cast<size_t>(row_)) {
      size_t n = grow(row_ + 1);
      cells_ += n - col.kinds.size();
      if (cells_ > kMaxCells) throw Bail();
      col.kinds.resize(n);
      col.nums.resize(n);
      if (!col.spans.empty()) col.spans.resize(2 * n);
    }
    *fresh = col.kinds[row_] == kAbsent;
    if (*fresh) col.present++;
    slot = static_cast<size_t>(row_);
  }
  col.kinds[slot] = kind;
  col.mask |= 1 << kind;
  return slot;
}

void ColumnSet::maybeDensify(Column& col) {
  if (col.sparse && col.present >= kDenseAfter && 4 * static_cast<uint64_t>(col.present) >= static_cast<uint64_t>(row_) + 1) densify(col);
}

void ColumnSet::densify(Column& col) {
  size_t n = grow(row_ + 1);
  cells_ += n > col.kinds.size() ? n - col.kinds.size() : 0;
  if (cells_ > kMaxCells) throw Bail();
  std::vector<uint8_t> kinds(n, kAbsent);
  std::vector<double> nums(n);
  std::vector<uint32_t> spans(col.spans.empty() ? 0 : 2 * n);
  for (uint32_t i = 0; i < col.present; i++) {
    const uint32_t r = col.rows[i];
    kinds[r] = col.kinds[i];
    nums[r] = col.nums[i];
    if (!spans.empty()) {
      spans[2 * r] = col.spans[2 * i];
      spans[2 * r + 1] = col.spans[2 * i + 1];
    }
  }
  col.kinds.swap(kinds);
  col.nums.swap(nums);
  col.spans.swap(spans);
  std::vector<uint32_t>().swap(col.rows);
  col.sparse = false;
}

bool ColumnSet::setNumber(int32_t c, uint8_t kind, double x) {
  bool fresh;
  size_t slot = touch(c, kind, &fresh);
  Column& col = columns_[c];
  col.nums[slot] = x;
  maybeDensify(col);
  return fresh;
}

bool ColumnSet::setString(int32_t c, std::string_view s) {
  bool fresh;
  size_t slot = touch(c, kString, &fresh);
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
  col.spans[2 * slot] = col.lastStart;
  col.spans[2 * slot + 1] = col.lastStart + col.lastLength;
  maybeDensify(col);
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

napi_value ColumnSet::result(napi_env env, bool posted) {
  const size_t rows = static_cast<size_t>(row_);
  napi_value out, fields, value;
  CHECK(napi_create_object(env, &out));
  CHECK(napi_create_uint32(env, static_cast<uint32_t>(rows), &value));
  CHECK(napi_set_named_property(env, out, "count", value));
  timeUs_.resize(rows);
  samplerate_.resize(rows);
  CHECK(napi_set_named_property(env, out, "timeUs", typedArray(env, napi_float64_array, timeUs_.data(), rows, 8)));
  CHECK(napi_set_named_property(env, out, "samplerate", typedArray(env, napi_float64_array, samplerate_.data(), rows, 8)));
  // Every column's arrays are views into three buffers (kinds; nums; spans and rows), so that
  // moving the columns to another thread moves three buffers, not four per column (a wide
  // request names thousands of fields).
  size_t kindBytes = 0, numCount = 0, wordCount = 0, count = 0;
  for (int32_t c : order_) {
    Column& col = columns_[c];
    if (col.present == 0) continue;
    // Sparse only where it saves: a column a quarter of the rows have ends dense (as ColumnsBuilder.finish).
    if (col.sparse && 4 * static_cast<uint64_t>(col.present) >= rows) densify(col);
    // Slots: one per row (dense), or one per value with its row (sparse).
    const size_t slots = col.sparse ? col.present : rows;
    kindBytes += slots;
    numCount += slots;
    if (col.mask & (1 << kString)) wordCount += 2 * slots;
    if (col.sparse) wordCount += slots;
    count++;
  }
  void *kindData, *numData, *wordData;
  napi_value kindBuffer, numBuffer, wordBuffer;
  CHECK(napi_create_arraybuffer(env, kindBytes, &kindData, &kindBuffer));
  CHECK(napi_create_arraybuffer(env, numCount * 8, &numData, &numBuffer));
  CHECK(napi_create_arraybuffer(env, wordCount * 4, &wordData, &wordBuffer));
  size_t kindAt = 0, numAt = 0, wordAt = 0;
  /** Copies `count` elements of `width` bytes from `data` into `base` at `*at` elements; answers where they start. */
  auto put = [](void* base, size_t* at, const void* data, size_t count, size_t width) -> size_t {
    const size_t start = *at;
    if (count) std::memcpy(static_cast<uint8_t*>(base) + start * width, data, count * width);
    *at += count;
    return start;
  };
  // Posted (src/stores/events/posted-columns.ts PostedColumns): the names, and FIELD_INTS numbers
  // per field in one Int32Array, instead of an object with a view per array for each field (a
  // dozen calls into V8 per field, a third of decoding a wide request).
  std::vector<int32_t> meta;
  if (posted) meta.reserve(count * kFieldInts);
  CHECK(napi_create_array_with_length(env, posted ? count : 0, &fields));
  uint32_t k = 0;
  for (int32_t c : order_) {
    Column& col = columns_[c];
    if (col.present == 0) continue;
    const size_t slots = col.sparse ? col.present : rows;
    const bool strings = col.mask & (1 << kString);
    const bool constant = !col.sparse && col.present == rows && col.mask == (1 << kString) && col.spansMade == 1;
    // (A dense column's arrays end at its last value's capacity: the rows after read as absent.)
    col.kinds.resize(slots);
    col.nums.resize(slots);
    if (strings) col.spans.resize(2 * slots);
    const size_t kindsAt = put(kindData, &kindAt, col.kinds.data(), slots, 1);
    const size_t numsAt = put(numData, &numAt, col.nums.data(), slots, 8);
    const int64_t spansAt = strings ? static_cast<int64_t>(put(wordData, &wordAt, col.spans.data(), 2 * slots, 4)) : -1;
    const int64_t rowsAt = col.sparse ? static_cast<int64_t>(put(wordData, &wordAt, col.rows.data(), slots, 4)) : -1;
    CHECK(napi_create_string_utf8(env, names_.data() + col.nameAt, col.nameLength, &value));
    if (posted) {
      CHECK(napi_set_element(env, fields, k++, value));
      for (int64_t x : {int64_t{col.mask}, int64_t{col.present}, static_cast<int64_t>(slots), static_cast<int64_t>(kindsAt), static_cast<int64_t>(numsAt), spansAt, rowsAt, int64_t{constant}}) {
        meta.push_back(static_cast<int32_t>(x));
      }
      continue;
    }
    napi_value f, array;
    CHECK(napi_create_object(env, &f));
    CHECK(napi_set_named_property(env, f, "name", value));
    CHECK(napi_create_typedarray(env, napi_uint8_array, slots, kindBuffer, kindsAt, &array));
    CHECK(napi_set_named_property(env, f, "kinds", array));
    CHECK(napi_create_int32(env, col.mask, &value));
    CHECK(napi_set_named_property(env, f, "mask", value));
    CHECK(napi_create_uint32(env, col.present, &value));
    CHECK(napi_set_named_property(env, f, "present", value));
    CHECK(napi_create_typedarray(env, napi_float64_array, slots, numBuffer, numsAt * 8, &array));
    CHECK(napi_set_named_property(env, f, "nums", array));
    if (spansAt >= 0) {
      CHECK(napi_create_typedarray(env, napi_uint32_array, 2 * slots, wordBuffer, static_cast<size_t>(spansAt) * 4, &array));
      CHECK(napi_set_named_property(env, f, "spans", array));
    }
    if (rowsAt >= 0) {
      CHECK(napi_create_typedarray(env, napi_uint32_array, slots, wordBuffer, static_cast<size_t>(rowsAt) * 4, &array));
      CHECK(napi_set_named_property(env, f, "rows", array));
    }
    CHECK(napi_get_boolean(env, constant, &value));
    CHECK(napi_set_named_property(env, f, "constant", value));
    CHECK(napi_set_element(env, fields, k++, f));
  }
  // As bytes: moved to the JavaScript thread without a copy, and from there into DuckDB's
  // vectors without becoming JavaScript strings.
  CHECK(napi_set_named_property(env, out, "text", typedArray(env, napi_uint8_array, text_.data(), text_.size(), 1)));
  if (!posted) {
    CHECK(napi_set_named_property(env, out, "fields", fields));
    return out;
  }
  napi_value array;
  CHECK(napi_get_boolean(env, true, &value));
  CHECK(napi_set_named_property(env, out, "posted", value));
  CHECK(napi_set_named_property(env, out, "names", fields));
  CHECK(napi_set_named_property(env, out, "meta", typedArray(env, napi_int32_array, meta.data(), meta.size(), 4)));
  CHECK(napi_create_typedarray(env, napi_uint8_array, kindBytes, kindBuffer, 0, &array));
  CHECK(napi_set_named_property(env, out, "kinds", array));
  CHECK(napi_create_typedarray(env, napi_float64_array, numCount, numBuffer, 0, &array));
  CHECK(napi_set_named_property(env, out, "nums", array));
  if (wordCount) {
    CHECK(napi_create_typedarray(env, napi_uint32_array, wordCount, wordBuffer, 0, &array));
    CHECK(napi_set_named_property(env, out, "words", array));
  }
  return out;
}

}  // namespace columns
