// The time range of a query: presets (last 10 minutes … 7 days) or an absolute range, and the
// granularity of its series.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { QuerySpec } from '../api/types.js';
import { describeRange, fromLocalInput, GRANULARITIES, PRESETS, toLocalInput, windowOf, withAbsolute, withPreset } from '../time.js';

export function TimePicker({ spec, onChange }: { spec: QuerySpec; onChange: (s: QuerySpec) => void }) {
  const [open, setOpen] = useState(false);
  const w = windowOf(spec, Math.floor(Date.now() / 1000));
  const [from, setFrom] = useState(toLocalInput(w.start));
  const [to, setTo] = useState(toLocalInput(w.end));
  const [error, setError] = useState<string | null>(null);
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!open) return;
    const now = windowOf(spec, Math.floor(Date.now() / 1000));
    setFrom(toLocalInput(now.start));
    setTo(toLocalInput(now.end));
    const close = (ev: MouseEvent) => !box.current?.contains(ev.target as Node) && setOpen(false);
    document.addEventListener('mousedown', close);
    return () => document.removeEventListener('mousedown', close);
  }, [open]);
  const apply = () => {
    const a = fromLocalInput(from);
    const b = fromLocalInput(to);
    if (a === undefined || b === undefined) return setError('Give both times.');
    if (b <= a) return setError('The end must be after the start.');
    setError(null);
    onChange(withAbsolute(spec, a, b));
    setOpen(false);
  };
  return (
    <div class="timepicker" ref={box} onKeyDown={(e) => e.key === 'Escape' && setOpen(false)}>
      <button type="button" aria-haspopup="dialog" aria-expanded={open} onClick={() => setOpen(!open)} data-testid="time-range">
        {describeRange(spec)} <span aria-hidden="true">▾</span>
      </button>
      {open && (
        <div class="menu" role="dialog" aria-label="Time range">
          <div class="presets">
            {PRESETS.map((p) => (
              <button
                type="button"
                key={p.seconds}
                aria-pressed={spec.start_time === undefined && spec.end_time === undefined && (spec.time_range ?? 7200) === p.seconds}
                onClick={() => {
                  onChange(withPreset(spec, p.seconds));
                  setOpen(false);
                }}
              >
                {p.label}
              </button>
            ))}
          </div>
          <div class="stack">
            <label class="field">
              From
              <input type="datetime-local" value={from} onInput={(e) => setFrom((e.target as HTMLInputElement).value)} />
            </label>
            <label class="field">
              To
              <input type="datetime-local" value={to} onInput={(e) => setTo((e.target as HTMLInputElement).value)} />
            </label>
            {error && <div class="field-error">{error}</div>}
            <button type="button" class="primary" onClick={apply}>
              Apply range
            </button>
          </div>
        </div>
      )}
    </div>
  );
}

export function GranularityPicker({ spec, onChange }: { spec: QuerySpec; onChange: (s: QuerySpec) => void }) {
  return (
    <label class="row small muted">
      Granularity
      <select
        value={String(spec.granularity ?? '')}
        onChange={(e) => {
          const v = (e.target as HTMLSelectElement).value;
          onChange({ ...spec, granularity: v === '' ? undefined : Number(v) });
        }}
      >
        {GRANULARITIES.map((g) => (
          <option key={g.label} value={g.seconds === undefined ? '' : String(g.seconds)}>
            {g.label}
          </option>
        ))}
      </select>
    </label>
  );
}
