#!/usr/bin/env bash
# Three Waggle nodes on one machine, sharing one PostgreSQL configuration store, for trying
# several nodes (docs/several-nodes.md). Ports 8081-8083, data directories ./data-nodes/node-N,
# no OTLP/gRPC servers. Ctrl-C stops them all. Kill one (kill -9 PID) to watch another take over.
#   WAGGLE_CONFIG_STORE=postgres://user@host:5432/db scripts/three-nodes.sh
set -eu
cd "$(dirname "$0")/.."
: "${WAGGLE_CONFIG_STORE:=postgres://postgres@127.0.0.1:5432/test}"
export WAGGLE_CONFIG_STORE
export WAGGLE_OTLP_GRPC_PORT=0
[ -f dist/main.js ] || npm run build
pids=""
trap 'kill $pids 2>/dev/null; wait' INT TERM
for n in 1 2 3; do
  mkdir -p "data-nodes/node-$n"
  WAGGLE_NODE_ID="node-$n" WAGGLE_PORT="808$n" WAGGLE_DATA_DIR="data-nodes/node-$n" \
    node dist/main.js serve > >(sed -u "s/^/[node-$n] /") 2>&1 &
  pids="$pids $!"
  echo "node-$n: http://127.0.0.1:808$n (pid $!)"
  # The first node initialises the store (and prints the keys) before the others start.
  [ "$n" = 1 ] && sleep 3
done
wait
