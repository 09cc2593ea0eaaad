{
  "targets": [
    {
      "target_name": "json_columns",
      "sources": ["src/json_columns.cc"],
      "cflags_cc!": ["-fno-exceptions", "-std=gnu++17"],
      "cflags_cc": ["-std=c++17", "-fexceptions", "-O3"],
      "defines": ["NAPI_VERSION=8"]
    }
  ]
}
