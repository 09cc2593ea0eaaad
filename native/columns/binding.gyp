{
  "targets": [
    {
      "target_name": "columns",
      "sources": ["src/module.cc", "src/columns.cc", "src/json_batch.cc", "src/otlp_traces.cc", "src/bucket_texts.cc"],
      "cflags_cc!": ["-fno-exceptions", "-std=gnu++17"],
      "cflags_cc": ["-std=c++17", "-fexceptions", "-O3", "-ffp-contract=off"],
      "defines": ["NAPI_VERSION=8"]
    }
  ]
}
