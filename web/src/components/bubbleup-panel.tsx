// BubbleUp's answer: which columns set the selected events apart from the rest of the query's
// events (or from the same selection an hour, a day or a week earlier: "Compare with"), most
// different first, each with both distributions side by side.
import { useState } from 'preact/hooks';
import type { BubbleUpAnswer, BubbleUpSelection } from '../api/types.js';
import { Distribution } from '../charts/distribution.js';
import { formatNumber } from '../format.js';
import { formatDateTime, spanText } from '../time.js';
import { ErrorNotice, Spinner } from './ui.js';

/** Columns shown before "show more". */
const FIRST = 6;
/** "Compare with" choices: seconds back, 0 for the rest of the query's events. */
export const COMPARE_OFFSETS = [0, 3600, 86_400, 604_800] as const;
const offsetName = (seconds: number) => (seconds === 604_800 ? '1 week' : spanText(seconds));
/** What the baseline is, as the header and the legend say it. */
export const baselineText = (offset: number) => (offset === 0 ? 'the rest' : `${offsetName(offset)} earlier`);

export function BubbleUpPanel(props: {
  selection: BubbleUpSelection;
  /** How the selected values read, when known (`sli_fast = false`); else the column's range. */
  label?: string;
  answer?: BubbleUpAnswer;
  error?: unknown;
  /** Seconds back the selection is compared with (0: the rest of the query's events), and how to change it. */
  offset: number;
  onOffset: (seconds: number) => void;
  onClose: () => void;
  onFilter?: (column: string, value: string | null) => void;
}) {
  const s = props.selection;
  const a = props.answer;
  const [all, setAll] = useState(false);
  const shown = a ? (all ? a.columns : a.columns.slice(0, FIRST)) : [];
  const length = s.end_time - s.start_time;
  const past = props.offset > 0;
  return (
    <section class="panel" aria-labelledby="bubbleup-h" data-testid="bubbleup">
      <div class="row" style={{ marginBottom: '10px' }}>
        <h2 id="bubbleup-h" style={{ margin: 0 }}>
          BubbleUp
        </h2>
        <span class="small muted" data-testid="bubbleup-compared">
          {formatDateTime(s.start_time)} – {formatDateTime(s.end_time)}
          {props.label ? ` · ${props.label}` : s.column ? ` · ${s.column} ${s.lower === s.upper ? `= ${formatNumber(s.lower)}` : `${formatNumber(s.lower)} – ${formatNumber(s.upper)}`}` : ''}
          {past
            ? ` vs the same selection ${offsetName(props.offset)} earlier (${formatDateTime(s.start_time - props.offset)} – ${formatDateTime(s.end_time - props.offset)})`
            : " vs the rest of the query's events"}
        </span>
        <span class="spacer" />
        <label class="row small">
          Compare with
          <select name="compare_with" value={props.offset} onChange={(e) => props.onOffset(Number((e.target as HTMLSelectElement).value))}>
            {COMPARE_OFFSETS.map((o) => (
              // The same selection earlier must not overlap it: no offset shorter than the selection.
              <option key={o} value={o} disabled={o > 0 && o < length}>
                {baselineText(o)}
              </option>
            ))}
          </select>
        </label>
        <span class="legend-inline">
          <span class="row">
            <span class="swatch" style={{ background: 'var(--selection)' }} /> selection
          </span>
          <span class="row">
            <span class="swatch" style={{ background: 'var(--baseline)' }} /> {past ? baselineText(props.offset) : 'baseline'}
          </span>
        </span>
        <button class="icon" aria-label="Close BubbleUp" onClick={props.onClose}>
          ×
        </button>
      </div>
      {props.error ? (
        <ErrorNotice error={props.error} />
      ) : !a ? (
        <Spinner label="Comparing the selection with the baseline" />
      ) : a.selection.rows === 0 ? (
        <p class="muted">No events in the selection. Select a region with events in it.</p>
      ) : (
        <>
          <p class="small muted" style={{ marginTop: 0 }}>
            {formatNumber(a.selection.events)} selected events against {formatNumber(a.baseline.events)} {past ? `in the same selection ${offsetName(props.offset)} earlier` : 'others'}
            {a.selection.sampled < a.selection.rows || a.baseline.sampled < a.baseline.rows ? ` (distributions from samples of ${formatNumber(a.selection.sampled)} and ${formatNumber(a.baseline.sampled)})` : ''}.
            Columns that differ most come first.
          </p>
          <div class="bubbleup-cols">
            {shown.map((c) => (
              <Distribution key={c.column} col={c} onFilter={props.onFilter && c.kind === 'values' ? (v) => props.onFilter!(c.column, v) : undefined} />
            ))}
          </div>
          {a.columns.length > FIRST && (
            <button class="ghost" style={{ marginTop: '10px' }} onClick={() => setAll(!all)} aria-expanded={all}>
              {all ? 'Show the top columns only' : `Show ${a.columns.length - FIRST} more columns`}
            </button>
          )}
        </>
      )}
    </section>
  );
}
