// What every bench part measures with: percentiles, means, and a process's CPU and peak memory
// from /proc (Linux).
import { readFileSync } from 'node:fs';

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The p-th percentile (0–100) of xs, nearest rank from below. */
export const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
export const p50 = (xs) => percentile(xs, 50);
export const p95 = (xs) => percentile(xs, 95);
export const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

const TICKS = 100; // USER_HZ on Linux
/** User + system CPU seconds of a process (all its threads), or of one of its threads. */
export function cpuSeconds(pid, thread) {
  const path = thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`;
  const fields = readFileSync(path, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS; // utime + stime
}
/** CPU ms of this process since `u0` (process.cpuUsage()). */
export const cpuMs = (u0) => {
  const u = process.cpuUsage(u0);
  return (u.user + u.system) / 1000;
};
/** Peak resident memory of a process, in MB (VmHWM). */
export function peakRssMb(pid) {
  return Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
}
