// Running the real `waggle` command (dist/main.js, built by `npm test`) as child processes:
// one-shot commands, and `waggle serve` started on port 0, with its address read from the
// "Server listening at" log line. Every spawned server is tracked so a test file can kill
// whatever is still running in afterEach.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));

/** The parent's environment without any WAGGLE_* variable, plus `extra`. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('WAGGLE_')) env[k] = v;
  // No OTLP/gRPC server on the shared default port 4317 unless a test asks for one.
  return { ...env, WAGGLE_OTLP_GRPC_PORT: '0', ...extra };
}

const tempDirs: string[] = [];
export function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'waggle-cli-'));
  tempDirs.push(d);
  return d;
}
export function removeTempDirs(): void {
  for (const d of tempDirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `waggle ...args` to completion (bounded by `timeout` ms), as another user when `uid`/`gid` are given. */
export function waggle(args: string[], opts: { env?: Record<string, string>; cwd?: string; timeout?: number; uid?: number; gid?: number } = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [MAIN, ...args],
      { env: cleanEnv(opts.env), cwd: opts.cwd, timeout: opts.timeout ?? 20_000, killSignal: 'SIGKILL', uid: opts.uid, gid: opts.gid },
      (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : null) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
  });
}

/** `waggle ...args` that must succeed; returns its stdout. */
export async function waggleOk(args: string[], opts: { env?: Record<string, string>; cwd?: string } = {}): Promise<string> {
  const r = await waggle(args, opts);
  if (r.code !== 0) throw new Error(`waggle ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}

export interface InitJson {
  team: { slug: string };
  environment: { slug: string };
  keys: { configuration: string; ingest: string; management: { id: string; secret: string } };
}

export async function initJson(dataDir: string, extra: string[] = []): Promise<InitJson> {
  return JSON.parse(await waggleOk(['init', '--data-dir', dataDir, '--json', ...extra])) as InitJson;
}

const running = new Set<ChildProcess>();

export interface Served {
  /** The process started: the server itself, or its launcher (`launch`). */
  proc: ChildProcess;
  /** e.g. http://127.0.0.1:41234, from the "Server listening at" log line. */
  url: string;
  /** The server's PID, from the same log line (the launcher's child's under `npm start` or `npx`). */
  pid: number;
  stdout(): string;
  stderr(): string;
  /** Resolves once stdout has `nth` (default 1) lines matching `re` (bounded by `timeout` ms); returns the nth. */
  waitFor(re: RegExp, timeout?: number, nth?: number): Promise<string>;
  /** Resolves with the exit code and signal (bounded by `timeout` ms, then SIGKILL and reject). */
  exited(timeout?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends `signal` and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Spawns `waggle serve ...args` (by default on 127.0.0.1, port 0) and resolves once it logs its
 * address. Rejects (and kills the process) if it exits first or takes longer than `timeout`.
 */
export function serve(args: string[], opts: { env?: Record<string, string>; timeout?: number; defaults?: boolean; nodeFlags?: string[] } = {}): Promise<Served> {
  const defaults = opts.defaults === false ? [] : ['--host', '127.0.0.1', '--port', '0'];
  return launch(process.execPath, [...(opts.nodeFlags ?? []), MAIN, 'serve', ...defaults, ...args], opts);
}

/** The repository's root (where `npm start` and `npx waggle` are run). */
export const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Spawns `command ...args` that starts a server (`waggle serve` itself, or a launcher such as
 * `npm start` or `npx waggle serve`, run in the repository's root) and resolves as `serve` does.
 * `group`: in a process group of its own, as a terminal runs a command (Ctrl-C signals the group).
 */
export function launch(command: string, args: string[], opts: { env?: Record<string, string>; timeout?: number; group?: boolean } = {}): Promise<Served> {
  const proc = spawn(command, args, {
    env: cleanEnv(opts.env),
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    // (its own process group, led by the launcher, as a terminal's foreground job is)
    detached: opts.group ?? false,
  });
  const name = command === process.execPath ? 'waggle serve' : `${command} ${args[0]}`;
  running.add(proc);
  let out = '';
  let err = '';
  const waiters: Array<() => void> = [];
  proc.stdout!.setEncoding('utf8').on('data', (c: string) => {
    out += c;
    for (const w of waiters.slice()) w();
  });
  proc.stderr!.setEncoding('utf8').on('data', (c: string) => {
    err += c;
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on('exit', (code, signal) => {
      running.delete(proc);
      resolve({ code, signal });
      for (const w of waiters.slice()) w();
    }),
  );
  let exitedYet = false;
  void exit.then(() => (exitedYet = true));

  const waitFor = (re: RegExp, timeout = 15_000, nth = 1) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const complete = out.slice(0, out.lastIndexOf('\n') + 1);
        const line = complete.split('\n').filter((l) => re.test(l))[nth - 1];
        if (line !== undefined) {
          done();
          resolve(line);
        } else if (exitedYet || proc.exitCode !== null || proc.signalCode !== null) {
          done();
          reject(new Error(`${name} exited before printing ${re}\nstdout:\n${out}\nstderr:\n${err}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`timed out waiting for ${re}\nstdout:\n${out}\nstderr:\n${err}`));
      }, timeout);
      const done = () => {
        clearTimeout(timer);
        const i = waiters.indexOf(check);
        if (i >= 0) waiters.splice(i, 1);
      };
      waiters.push(check);
      check();
    });

  const exited = (timeout = 15_000) =>
    Promise.race([
      exit,
      new Promise<never>((_, reject) =>
        setTimeout(() => {
          proc.kill('SIGKILL');
          reject(new Error(`${name} did not exit within ${timeout} ms\nstdout:\n${out}\nstderr:\n${err}`));
        }, timeout).unref(),
      ),
    ]);

  const served = {
    proc,
    url: '',
    pid: 0,
    stdout: () => out,
    stderr: () => err,
    waitFor,
    exited,
    stop(signal: NodeJS.Signals = 'SIGTERM') {
      proc.kill(signal);
      return exited();
    },
  };
  return waitFor(/Server listening at http:\/\//, opts.timeout).then(
    (line) => {
      served.url = /Server listening at (http:\/\/[^"\s]+)/.exec(line)![1];
      served.pid = Number(/"pid":(\d+)/.exec(line)![1]);
      if (served.pid !== proc.pid) launched.add(served.pid);
      return served;
    },
    (e: unknown) => {
      proc.kill('SIGKILL');
      throw e;
    },
  );
}

/** Servers started by a launcher (`launch`): not children of this process, so killed by PID. */
const launched = new Set<number>();

/** Whether process `pid` still runs (a zombie no one has reaped yet counts as gone). */
export function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Kills every server still running (afterEach/afterAll). */
export async function killAll(): Promise<void> {
  for (const pid of launched) if (alive(pid)) process.kill(pid, 'SIGKILL');
  launched.clear();
  await Promise.all(
    [...running].map(
      (p) =>
        new Promise<void>((resolve) => {
          if (p.exitCode !== null || p.signalCode !== null) return resolve();
          p.once('exit', () => resolve());
          p.kill('SIGKILL');
        }),
    ),
  );
  running.clear();
}

export interface Res {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/** fetch against a started server; parses JSON bodies. */
export async function call(base: string, path: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}): Promise<Res> {
  const res = await fetch(base + path, {
    method: init.method ?? 'GET',
    headers: init.headers,
    body: init.body === undefined ? undefined : typeof init.body === 'string' ? init.body : JSON.stringify(init.body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  let body: any = undefined;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, body, text };
}

export const teamHeaders = (token: string) => ({ 'x-honeycomb-team': token });
export const bearer = (id: string, secret: string) => ({ authorization: `Bearer ${id}:${secret}` });
