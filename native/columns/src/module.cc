// The addon's two readers: /1/batch JSON bodies (json_batch.cc) and OTLP trace protobuf
// requests (otlp_traces.cc), each straight into event columns (columns.h).
#include <node_api.h>

#include "columns.h"

napi_value ReadBatch(napi_env env, napi_callback_info info);
napi_value ReadTraces(napi_env env, napi_callback_info info);

namespace {

napi_value Init(napi_env env, napi_value exports) {
  napi_value fn;
  CHECK(napi_create_function(env, "readBatch", NAPI_AUTO_LENGTH, ReadBatch, nullptr, &fn));
  CHECK(napi_set_named_property(env, exports, "readBatch", fn));
  CHECK(napi_create_function(env, "readTraces", NAPI_AUTO_LENGTH, ReadTraces, nullptr, &fn));
  CHECK(napi_set_named_property(env, exports, "readTraces", fn));
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
