// The embedded event store's attribute bucket texts for one data chunk, written natively: what
// src/stores/events/duckdb-bucket-texts.ts's TextBucketBuilder does in JavaScript, for runs whose
// arrays are views of their request's shared buffers (the native readers make them so). Each
// row's entries `\x01<key>=<value>` (src/stores/events/duckdb-attributes.ts has the format) go
// into one byte buffer, and each row's DuckDB string entry (16 bytes: the length, then the bytes
// inline up to 12, else their first four and a pointer into the buffer) into the entries array,
// with the row's validity bit. A number's text is what JavaScript's String gives it.
#include <node_api.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "columns.h"

namespace {

/** Numbers per run in the runs array (duckdb-bucket-texts.ts RUN_INTS). */
constexpr size_t kRunInts = 11;
enum Run { kPart, kKey, kFrom, kRow, kTake, kMarked, kKindsAt, kNumsAt, kSpansAt, kRowsAt, kSlots };
/** Bytes of a number's text at most (NUMBER_TEXT_BYTES). */
constexpr uint32_t kNumberTextBytes = 25;
constexpr uint8_t kEntry = 0x01, kEscape = 0x02, kEscapedEntry = 0x61, kEscapedEscape = 0x62;
constexpr uint32_t kStringT = 16, kInline = 12;

template <typename T>
struct View {
  const T* data = nullptr;
  size_t length = 0;
};

template <typename T>
bool viewOf(napi_env env, napi_value v, napi_typedarray_type want, View<T>* out) {
  napi_valuetype t;
  if (napi_typeof(env, v, &t) != napi_ok) return false;
  if (t == napi_undefined) return true;  // a part without word values
  napi_typedarray_type type;
  void* data;
  if (napi_get_typedarray_info(env, v, &type, &out->length, &data, nullptr, nullptr) != napi_ok || type != want) return false;
  out->data = static_cast<const T*>(data);
  return true;
}

/**
 * A double's text as JavaScript's Number.prototype.toString gives it: the shortest digits that
 * read back as the same double (std::to_chars gives those, as ECMAScript's algorithm does), laid
 * out by ECMAScript's rules (Number::toString): plain up to 21 integer digits, "0.000…" down to
 * 1e-6, else "d.ddde±n". Answers the byte after it.
 */
uint8_t* jsNumberText(double x, uint8_t* out) {
  if (x == 0) {  // -0 too
    *out++ = '0';
    return out;
  }
  char sci[40];
  auto r = std::to_chars(sci, sci + sizeof sci, x, std::chars_format::scientific);
  const char* p = sci;
  if (*p == '-') {
    *out++ = '-';
    ++p;
  }
  char digits[24];
  int k = 0;
  for (; p < r.ptr && *p != 'e'; ++p)
    if (*p != '.') digits[k++] = *p;
  int exponent = 0;
  std::from_chars(p + 1 + (p[1] == '+'), r.ptr, exponent);
  const int n = exponent + 1;  // the decimal point's place, as ECMAScript counts it
  if (k <= n && n <= 21) {
    for (int i = 0; i < k; i++) *out++ = digits[i];
    for (int i = k; i < n; i++) *out++ = '0';
  } else if (0 < n && n <= 21) {
    for (int i = 0; i < n; i++) *out++ = digits[i];
    *out++ = '.';
    for (int i = n; i < k; i++) *out++ = digits[i];
  } else if (-6 < n && n <= 0) {
    *out++ = '0';
    *out++ = '.';
    for (int i = n; i < 0; i++) *out++ = '0';
    for (int i = 0; i < k; i++) *out++ = digits[i];
  } else {
    *out++ = digits[0];
    if (k > 1) {
      *out++ = '.';
      for (int i = 1; i < k; i++) *out++ = digits[i];
    }
    *out++ = 'e';
    *out++ = n - 1 >= 0 ? '+' : '-';
    auto e = std::to_chars(reinterpret_cast<char*>(out), reinterpret_cast<char*>(out) + 8, std::abs(n - 1));
    out = reinterpret_cast<uint8_t*>(e.ptr);
  }
  return out;
}

/** A number's (or boolean's) text as an attribute keeps it (putNumberText). */
uint8_t* numberText(uint8_t kind, double x, uint8_t* out) {
  if (kind == columns::kBoolean) {
    const char* word = x != 0 ? "true" : "false";
    size_t n = std::strlen(word);
    std::memcpy(out, word, n);
    return out + n;
  }
  if (kind == columns::kInteger && std::fabs(x) <= 9007199254740991.0) {
    auto e = std::to_chars(reinterpret_cast<char*>(out), reinterpret_cast<char*>(out) + 24, static_cast<int64_t>(x));
    return reinterpret_cast<uint8_t*>(e.ptr);
  }
  return jsNumberText(x, out);
}

/** One run, its arrays checked against its part's buffers. */
struct RunView {
  const int32_t* r;
  const uint8_t* text;
  size_t textLength;
  const uint8_t* kinds;
  const double* nums;
  const uint32_t* spans;  // null: no strings
  const uint32_t* rows;  // null: dense
  uint32_t first, end;
  uint8_t head[16];
  uint32_t headLength;
};

/** The first slot of a run's field at or after part row `row` (firstSlotFrom). */
uint32_t firstSlotFrom(const RunView& v, uint32_t slots, uint32_t row) {
  if (!v.rows) return std::min(row, slots);
  uint32_t lo = 0, hi = slots;
  while (lo < hi) {
    uint32_t mid = (lo + hi) >> 1;
    if (v.rows[mid] < row) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * bucketTexts(runs: Int32Array, runCount, texts: Uint8Array[], kinds: Uint8Array[],
 * nums: Float64Array[], words: (Uint32Array | undefined)[], rows, buf: Uint8Array,
 * entries: Uint8Array, validity: Uint8Array) → the bytes of `buf` used, or minus the bytes
 * needed when it is too small (nothing written then). The arrays of each part are its shared
 * buffers, whole; a run gives offsets into them. Throws a TypeError on arguments out of bounds.
 */
napi_value BucketTexts(napi_env env, napi_callback_info info) {
  size_t argc = 10;
  napi_value argv[10];
  CHECK(napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr));
  auto fail = [&](const char* what) -> napi_value {
    napi_throw_type_error(env, nullptr, (std::string("bucketTexts: ") + what).c_str());
    return nullptr;
  };
  if (argc < 10) return fail("10 arguments are required");
  View<int32_t> runs;
  View<uint8_t> buf, entries, validity;
  uint32_t runCount, rows;
  if (!viewOf(env, argv[0], napi_int32_array, &runs) || !runs.data) return fail("runs must be an Int32Array");
  CHECK(napi_get_value_uint32(env, argv[1], &runCount));
  CHECK(napi_get_value_uint32(env, argv[6], &rows));
  if (!viewOf(env, argv[7], napi_uint8_array, &buf) || !viewOf(env, argv[8], napi_uint8_array, &entries) ||
      !viewOf(env, argv[9], napi_uint8_array, &validity) || !entries.data || !validity.data) {
    return fail("buf, entries and validity must be Uint8Arrays");
  }
  if (static_cast<size_t>(runCount) * kRunInts > runs.length || entries.length < size_t{rows} * kStringT || validity.length * 8 < rows) {
    return fail("arrays too short");
  }
  uint32_t parts;
  CHECK(napi_get_array_length(env, argv[2], &parts));
  std::vector<View<uint8_t>> texts(parts), kinds(parts);
  std::vector<View<double>> nums(parts);
  std::vector<View<uint32_t>> words(parts);
  for (uint32_t i = 0; i < parts; i++) {
    napi_value t, k, n, w;
    CHECK(napi_get_element(env, argv[2], i, &t));
    CHECK(napi_get_element(env, argv[3], i, &k));
    CHECK(napi_get_element(env, argv[4], i, &n));
    CHECK(napi_get_element(env, argv[5], i, &w));
    if (!viewOf(env, t, napi_uint8_array, &texts[i]) || !viewOf(env, k, napi_uint8_array, &kinds[i]) ||
        !viewOf(env, n, napi_float64_array, &nums[i]) || !viewOf(env, w, napi_uint32_array, &words[i])) {
      return fail("a part's arrays are of the wrong types");
    }
  }
  std::vector<RunView> views(runCount);
  for (uint32_t i = 0; i < runCount; i++) {
    const int32_t* r = runs.data + i * kRunInts;
    RunView& v = views[i];
    v.r = r;
    const int64_t part = r[kPart], slots = r[kSlots], kindsAt = r[kKindsAt], numsAt = r[kNumsAt], spansAt = r[kSpansAt], rowsAt = r[kRowsAt];
    if (part < 0 || part >= parts || slots < 0 || kindsAt < 0 || numsAt < 0 || r[kKey] < 0 || r[kFrom] < 0 || r[kRow] < 0 || r[kTake] < 0 ||
        static_cast<int64_t>(r[kRow]) + r[kTake] > rows || kindsAt + slots > static_cast<int64_t>(kinds[part].length) ||
        numsAt + slots > static_cast<int64_t>(nums[part].length) ||
        (spansAt >= 0 && spansAt + 2 * slots > static_cast<int64_t>(words[part].length)) ||
        (rowsAt >= 0 && rowsAt + slots > static_cast<int64_t>(words[part].length))) {
      return fail("a run is out of bounds");
    }
    v.text = texts[part].data;
    v.textLength = texts[part].length;
    v.kinds = kinds[part].data + kindsAt;
    v.nums = nums[part].data + numsAt;
    v.spans = spansAt >= 0 ? words[part].data + spansAt : nullptr;
    v.rows = rowsAt >= 0 ? words[part].data + rowsAt : nullptr;
    v.first = firstSlotFrom(v, static_cast<uint32_t>(slots), static_cast<uint32_t>(r[kFrom]));
    v.end = firstSlotFrom(v, static_cast<uint32_t>(slots), static_cast<uint32_t>(r[kFrom]) + static_cast<uint32_t>(r[kTake]));
    v.head[0] = kEntry;
    auto e = std::to_chars(reinterpret_cast<char*>(v.head + 1), reinterpret_cast<char*>(v.head + 13), r[kKey]);
    *e.ptr = '=';
    v.headLength = static_cast<uint32_t>(e.ptr - reinterpret_cast<char*>(v.head)) + 1;
  }
  // Each row's room (a value's bytes, twice that where they may need escaping, a number's longest text), then its place.
  std::vector<uint32_t> start(rows + 1, 0), at(rows, 0);
  for (const RunView& v : views) {
    const uint32_t wide = v.r[kMarked] ? 2 : 1;
    for (uint32_t s = v.first; s < v.end; s++) {
      const uint8_t kind = v.kinds[s];
      if (kind == columns::kAbsent) continue;
      uint32_t room = v.headLength + kNumberTextBytes;
      if (kind == columns::kString) {
        if (!v.spans || v.spans[2 * s] > v.spans[2 * s + 1] || v.spans[2 * s + 1] > v.textLength) return fail("a span is out of bounds");
        room = v.headLength + wide * (v.spans[2 * s + 1] - v.spans[2 * s]);
      }
      const uint32_t row = v.r[kRow] + (v.rows ? v.rows[s] : s) - v.r[kFrom];
      at[row] += room;
    }
  }
  uint64_t total = 0;
  for (uint32_t row = 0; row < rows; row++) {
    start[row] = static_cast<uint32_t>(total);
    total += at[row];
    at[row] = start[row];
  }
  // (Offsets are 32-bit, as DuckDB's string lengths are; JavaScript cannot make a larger buffer.)
  if (total > UINT32_MAX) return fail("a chunk's texts are past 4 GB");
  napi_value out;
  if (total > buf.length) {
    CHECK(napi_create_double(env, -static_cast<double>(total), &out));
    return out;
  }
  uint8_t* const b = const_cast<uint8_t*>(buf.data);
  for (const RunView& v : views) {
    const bool marked = v.r[kMarked] != 0;
    for (uint32_t s = v.first; s < v.end; s++) {
      const uint8_t kind = v.kinds[s];
      if (kind == columns::kAbsent) continue;
      const uint32_t row = v.r[kRow] + (v.rows ? v.rows[s] : s) - v.r[kFrom];
      uint8_t* w = b + at[row];
      std::memcpy(w, v.head, v.headLength);
      w += v.headLength;
      if (kind == columns::kString) {
        const uint8_t* q = v.text + v.spans[2 * s];
        const uint8_t* end = v.text + v.spans[2 * s + 1];
        if (!marked) {
          std::memcpy(w, q, end - q);
          w += end - q;
        } else {
          for (; q < end; ++q) {
            if (*q != kEntry && *q != kEscape) *w++ = *q;
            else {
              *w++ = kEscape;
              *w++ = *q == kEntry ? kEscapedEntry : kEscapedEscape;
            }
          }
        }
      } else {
        w = numberText(kind, v.nums[s], w);
      }
      at[row] = static_cast<uint32_t>(w - b);
    }
  }
  uint8_t* const e = const_cast<uint8_t*>(entries.data);
  uint8_t* const valid = const_cast<uint8_t*>(validity.data);
  std::memset(valid, 0, (rows + 7) / 8);
  for (uint32_t row = 0; row < rows; row++) {
    uint8_t* entry = e + size_t{row} * kStringT;
    const uint32_t n = at[row] - start[row];
    std::memset(entry, 0, kStringT);
    if (n == 0) continue;  // NULL
    valid[row >> 3] |= static_cast<uint8_t>(1 << (row & 7));
    std::memcpy(entry, &n, 4);
    const uint8_t* bytes = b + start[row];
    if (n <= kInline) {
      std::memcpy(entry + 4, bytes, n);
    } else {
      std::memcpy(entry + 4, bytes, 4);
      std::memcpy(entry + 8, &bytes, sizeof bytes);
    }
  }
  CHECK(napi_create_double(env, static_cast<double>(total), &out));
  return out;
}

}  // namespace

napi_value BucketTextsFunction(napi_env env) {
  napi_value fn;
  CHECK(napi_create_function(env, "bucketTexts", NAPI_AUTO_LENGTH, BucketTexts, nullptr, &fn));
  return fn;
}
