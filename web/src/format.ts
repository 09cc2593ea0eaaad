// How numbers, durations and times read in tables, legends and tooltips.

/** Up to 4 significant digits, thousands grouped, `k`/`M`/`G` past a million. */
export function formatNumber(v: number | null | undefined): string {
  if (v === null || v === undefined || Number.isNaN(v)) return '–';
  if (!Number.isFinite(v)) return v > 0 ? '∞' : '−∞';
  const a = Math.abs(v);
  if (a >= 1e9) return `${trim(v / 1e9)}G`;
  if (a >= 1e6) return `${trim(v / 1e6)}M`;
  if (Number.isInteger(v)) return v.toLocaleString('en-US');
  if (a >= 1000) return Math.round(v).toLocaleString('en-US');
  return trim(v);
}

const trim = (v: number) => String(Number(v.toPrecision(4)));

/** `850 µs`, `12.5 ms`, `1.24 s`, `3.5 min`. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '–';
  if (ms === 0) return '0 ms';
  if (ms < 1) return `${trim(ms * 1000)} µs`;
  if (ms < 1000) return `${trim(ms)} ms`;
  if (ms < 60_000) return `${trim(ms / 1000)} s`;
  return `${trim(ms / 60_000)} min`;
}

export function formatPercent(share: number, digits = 1): string {
  return `${(share * 100).toFixed(digits)}%`;
}

/** A local `YYYY-MM-DD HH:mm:ss` of an RFC 3339 time. */
export function formatTimestamp(iso: string): string {
  const t = new Date(iso);
  if (Number.isNaN(t.getTime())) return iso;
  const p = (n: number) => String(n).padStart(2, '0');
  return `${t.getFullYear()}-${p(t.getMonth() + 1)}-${p(t.getDate())} ${p(t.getHours())}:${p(t.getMinutes())}:${p(t.getSeconds())}`;
}

/** `3 minutes ago`, `2 days ago`, `just now`. */
export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return 'never';
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 45) return 'just now';
  const units: [number, string][] = [[86400, 'day'], [3600, 'hour'], [60, 'minute']];
  for (const [u, name] of units) {
    if (s >= u) {
      const n = Math.round(s / u);
      return `${n} ${name}${n === 1 ? '' : 's'} ago`;
    }
  }
  return `${s} seconds ago`;
}
