// One request's events as the columns src/stores/events/columns.ts describes (EventColumns),
// built one row at a time by the native readers (json_batch.cc, otlp_traces.cc) the way that
// file's ColumnsBuilder builds them: columns in the order they were first given a value, a
// field set twice in a row keeping the later value, string values as one buffer of UTF-8 bytes
// (the spans count bytes) that moves to the JavaScript thread without a copy.
#pragma once

#include <node_api.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace columns {

constexpr uint8_t kAbsent = 0, kString = 1, kInteger = 2, kFloat = 3, kBoolean = 4;

/**
 * Most slots held across the columns (a dense column has one per row, a sparse one per value). A
 * request past it is left to the JavaScript path, which refuses it as too large
 * (MAX_VALUES_PER_REQUEST in src/stores/events/columns.ts).
 */
constexpr size_t kMaxCells = size_t{1} << 25;
/** A column is sparse until it has this many values and a quarter of the rows so far have it (DENSE_AFTER). */
constexpr uint32_t kDenseAfter = 16;
/** Numbers per field in PostedColumns.meta (FIELD_INTS in posted-columns.ts). */
constexpr size_t kFieldInts = 8;

/** Thrown where the JavaScript path must decide: the reader answers undefined. */
struct Bail {};

/** A field's values across the rows (FieldColumn): a slot per row (dense) or per value (sparse, `rows` the slots' rows). */
struct Column {
  /** The name: its bytes' place in ColumnSet's names, and its hash (nameHash) for the name index. */
  uint32_t nameAt = 0, nameLength = 0;
  uint64_t hash = 0;
  /** The name's length in UTF-16 units (what the JavaScript paths count toward an event's size). */
  uint32_t nameUnits = 0;
  bool sparse = true;
  std::vector<uint32_t> rows;
  std::vector<uint8_t> kinds;
  std::vector<double> nums;
  std::vector<uint32_t> spans;
  int mask = 0;
  uint32_t present = 0;
  /** The row this name was last looked up in (the JSON reader refuses a name twice in an event). */
  int64_t lastRow = -1;
  bool ordered = false;
  /** The last string given (as bytes of the text), to share its text when the next repeats it. */
  bool hasLast = false;
  uint32_t lastStart = 0, lastLength = 0;
  uint32_t spansMade = 0;
  /** The column looked up after this one in the last row: tried before the hash lookup. */
  int32_t next = -1;
};

/**
 * The length of the well-formed UTF-8 sequence at q (its first byte >= 0x80, before `end`), or
 * 0 when it is not one (overlong, a surrogate, past U+10FFFF, cut short): what TextDecoder and
 * Buffer make U+FFFD.
 */
size_t utf8Sequence(const uint8_t* q, const uint8_t* end);

/** Whether all of `s` is well-formed UTF-8. */
bool wellFormedUtf8(std::string_view s);

/** UTF-16 units of well-formed UTF-8. */
uint32_t utf16Length(std::string_view s);

/** The kind JavaScript's kindOf gives a number: integers below 2^63 are integers. */
uint8_t numberKind(double x);

class ColumnSet {
 public:
  /** The column named `name`, made when new; the last row's order is tried first. */
  int32_t lookup(std::string_view name);
  Column& at(int32_t c) { return columns_[c]; }
  int64_t row() const { return row_; }

  /** Sets the current row's value; true when the column had none in this row yet. */
  bool setNumber(int32_t c, uint8_t kind, double x);
  bool setString(int32_t c, std::string_view s);

  void endRow(double timeUs, double samplerate);

  /**
   * The EventColumns, or (`posted`) the form an ingest thread posts them in (PostedColumns,
   * src/stores/events/posted-columns.ts); throws Bail past kMaxCells.
   */
  napi_value result(napi_env env, bool posted);

 private:
  std::vector<Column> columns_;
  /**
   * Column numbers by name with the name's hash, open-addressed (a power of two, at most half
   * full): a wide request looks up thousands of names in an order that changes from event to
   * event, and std::unordered_map's lookups (a key string made, a division, a node to chase)
   * were about a quarter of reading one.
   */
  struct Slot {
    uint64_t hash;
    int32_t column;  // -1: empty
  };
  std::vector<Slot> index_;
  /** Every column's name, one after another (compared on lookups: kept together, not one allocation each). */
  std::string names_;
  std::string_view nameOf(const Column& col) const { return std::string_view(names_.data() + col.nameAt, col.nameLength); }
  /** Columns in the order they were first given a value (ColumnsBuilder's order). */
  std::vector<int32_t> order_;
  std::vector<double> timeUs_, samplerate_;
  std::string text_;  // every string value, UTF-8 (the spans count its bytes)
  int64_t row_ = 0;
  size_t capacity_ = 0;
  size_t cells_ = 0;
  /** The column looked up last in this row (-1 at a row's start). */
  int32_t prev_ = -1;

  size_t grow(size_t need);
  /** Adds column `c` to index_ (grown and rebuilt when half full). */
  void indexColumn(int32_t c);
  /** The column's slot for the current row, with its kind set; `fresh`: the row had none. */
  size_t touch(int32_t c, uint8_t kind, bool* fresh);
  /** Makes a sparse column dense once it has kDenseAfter values and a quarter of the rows so far have it. */
  void maybeDensify(Column& col);
  /** Makes a sparse column dense: a slot per row. */
  void densify(Column& col);
};

/**
 * A reader's `n` arguments, the first a Uint8Array (the body): false when there are fewer, or
 * when the body is no Uint8Array (a TypeError is then pending).
 */
bool readerArgs(napi_env env, napi_callback_info info, size_t n, napi_value* argv, const uint8_t** body, size_t* length, const char* name);

/** A typed array holding a copy of `count` elements of `width` bytes. */
napi_value typedArray(napi_env env, napi_typedarray_type type, const void* data, size_t count, size_t width);

}  // namespace columns

#define CHECK(call)                        \
  do {                                     \
    if ((call) != napi_ok) return nullptr; \
  } while (0)
