// The addon's two readers: /1/batch JSON bodies (json_batch.cc) and OTLP trace protobuf
// requests (otlp_traces.cc), each straight into event columns (columns.h); and, for the event
// store's chunk writer (src/stores/events/duckdb-chunks.ts), addressOf and the attribute bucket
// texts' writer (bucket_texts.cc).
#include <node_api.h>

#include <cstdint>

#include "columns.h"

napi_value ReadBatch(napi_env env, napi_callback_info info);
napi_value ReadTraces(napi_env env, napi_callback_info info);
napi_value BucketTextsFunction(napi_env env);

namespace {

/**
 * addressOf(view: Uint8Array): number. The address of the view's first byte, for DuckDB string
 * entries that point into JavaScript memory (an ArrayBuffer's bytes never move). Addresses are
 * below 2^53 on the 64-bit machines Node runs on, so a double holds them exactly.
 */
napi_value AddressOf(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr));
  bool is = false;
  if (argc < 1 || napi_is_typedarray(env, argv[0], &is) != napi_ok || !is) {
    napi_throw_type_error(env, nullptr, "addressOf: a Uint8Array is required");
    return nullptr;
  }
  napi_typedarray_type type;
  size_t length;
  void* data = nullptr;
  CHECK(napi_get_typedarray_info(env, argv[0], &type, &length, &data, nullptr, nullptr));
  napi_value out;
  CHECK(napi_create_double(env, static_cast<double>(reinterpret_cast<uintptr_t>(data)), &out));
  return out;
}

napi_value Init(napi_env env, napi_value exports) {
  napi_value fn;
  CHECK(napi_create_function(env, "readBatch", NAPI_AUTO_LENGTH, ReadBatch, nullptr, &fn));
  CHECK(napi_set_named_property(env, exports, "readBatch", fn));
  CHECK(napi_create_function(env, "readTraces", NAPI_AUTO_LENGTH, ReadTraces, nullptr, &fn));
  CHECK(napi_set_named_property(env, exports, "readTraces", fn));
  CHECK(napi_create_function(env, "addressOf", NAPI_AUTO_LENGTH, AddressOf, nullptr, &fn));
  CHECK(napi_set_named_property(env, exports, "addressOf", fn));
  CHECK(napi_set_named_property(env, exports, "bucketTexts", BucketTextsFunction(env)));
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
