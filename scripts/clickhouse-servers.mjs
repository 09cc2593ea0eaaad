// Starts Debian's `clickhouse-server` (18.16) for tests and benchmarks: `count` servers on free
// loopback ports, each with a temporary data directory and a generated config; with 2 servers each
// is a shard of the cluster `waggle` (remote_servers in both configs). Used by test/clickhouse.ts
// and bench/clickhouse.mjs.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const CANDIDATES = [process.env.WAGGLE_CLICKHOUSE_SERVER, '/usr/sbin/clickhouse-server', '/usr/bin/clickhouse-server', '/usr/bin/clickhouse'].filter(Boolean);
/** The server binary, or undefined when ClickHouse is not installed. */
export const clickhouseBinary = CANDIDATES.find((p) => existsSync(p));

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = s.address().port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

function config(dir, http, tcp, interserver, shards) {
  const remote = shards.map((s) => `<shard><replica><host>127.0.0.1</host><port>${s.tcp}</port></replica></shard>`).join('');
  return `<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>${dir}/server.log</log><errorlog>${dir}/error.log</errorlog></logger>
  <http_port>${http}</http_port>
  <tcp_port>${tcp}</tcp_port>
  <interserver_http_port>${interserver}</interserver_http_port>
  <listen_host>127.0.0.1</listen_host>
  <path>${dir}/data/</path>
  <tmp_path>${dir}/tmp/</tmp_path>
  <user_files_path>${dir}/user_files/</user_files_path>
  <format_schema_path>${dir}/format_schemas/</format_schema_path>
  <mark_cache_size>67108864</mark_cache_size>
  <uncompressed_cache_size>67108864</uncompressed_cache_size>
  <max_concurrent_queries>100</max_concurrent_queries>
  <users><default><password></password><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></default></users>
  <profiles><default></default></profiles>
  <quotas><default></default></quotas>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <remote_servers><waggle>${remote}</waggle></remote_servers>
</yandex>
`;
}

async function waitReady(http, child, dir) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`clickhouse-server exited (${child.exitCode}); see ${dir}/error.log`);
    try {
      const res = await fetch(`http://127.0.0.1:${http}/?query=SELECT%201`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`clickhouse-server on port ${http} did not answer within 30 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

let databases = 0;

/** Whether a server failed because one of its ports was taken meanwhile (see freePort). */
const portTaken = (root) =>
  readdirSync(root).some((n) => {
    const log = join(root, n, 'error.log');
    return existsSync(log) && /Address already in use/.test(readFileSync(log, 'utf8'));
  });

/**
 * Starts `count` servers (1: a single node; 2: two shards of the cluster `waggle`). A port is
 * free when picked and taken at bind by another process now and then (tests run side by side):
 * then it starts again on new ports.
 */
export async function startClickHouse(count, attempts = 3) {
  if (!clickhouseBinary) throw new Error('clickhouse-server is not installed');
  const root = mkdtempSync(join(tmpdir(), 'waggle-clickhouse-'));
  try {
    return await startIn(root, count);
  } catch (err) {
    if (attempts <= 1 || !portTaken(root)) throw err; // (its logs kept: the error names them)
    rmSync(root, { recursive: true, force: true });
    return startClickHouse(count, attempts - 1);
  }
}

async function startIn(root, count) {
  const nodes = [];
  for (let i = 0; i < count; i++) nodes.push({ http: await freePort(), tcp: await freePort(), interserver: await freePort(), dir: join(root, `node${i}`) });
  const children = [];
  try {
    for (const n of nodes) {
      for (const sub of ['data', 'tmp', 'user_files', 'format_schemas']) mkdirSync(join(n.dir, sub), { recursive: true });
      writeFileSync(join(n.dir, 'config.xml'), config(n.dir, n.http, n.tcp, n.interserver, nodes));
      children.push(spawn(clickhouseBinary, clickhouseBinary.endsWith('/clickhouse') ? ['server', `--config-file=${n.dir}/config.xml`] : [`--config-file=${n.dir}/config.xml`], { cwd: n.dir, stdio: 'ignore' }));
    }
    await Promise.all(nodes.map((n, i) => waitReady(n.http, children[i], n.dir)));
  } catch (err) {
    for (const c of children) c.kill('SIGKILL');
    throw err;
  }
  const launch = (n) => spawn(clickhouseBinary, clickhouseBinary.endsWith('/clickhouse') ? ['server', `--config-file=${n.dir}/config.xml`] : [`--config-file=${n.dir}/config.xml`], { cwd: n.dir, stdio: 'ignore' });
  return {
    httpPorts: nodes.map((n) => n.http),
    pids: children.map((c) => c.pid),
    /** Kills server `i` at once (SIGKILL): a shard that no longer answers. */
    kill: async (i) => {
      const c = children[i];
      if (c.exitCode !== null || c.signalCode !== null) return;
      await new Promise((resolve) => {
        c.once('exit', resolve);
        c.kill('SIGKILL');
      });
    },
    /** Starts server `i` again on its data directory and ports (after kill). */
    restart: async (i) => {
      children[i] = launch(nodes[i]);
      await waitReady(nodes[i].http, children[i], nodes[i].dir);
    },
    setting: (database = `waggle_test_${process.pid}_${++databases}`) =>
      `clickhouse://default@${nodes.map((n) => `127.0.0.1:${n.http}`).join(',')}/${database}${count > 1 ? '?cluster=waggle' : ''}`,
    stop: async () => {
      await Promise.all(
        children.map(
          (c) =>
            new Promise((resolve) => {
              if (c.exitCode !== null) return resolve();
              const timer = setTimeout(() => c.kill('SIGKILL'), 10_000);
              c.once('exit', () => {
                clearTimeout(timer);
                resolve();
              });
              c.kill('SIGTERM');
            }),
        ),
      );
      rmSync(root, { recursive: true, force: true });
    },
  };
}
