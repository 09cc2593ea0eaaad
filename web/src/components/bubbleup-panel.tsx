// BubbleUp's answer: which columns set the selected events apart from the rest of the query's
// events, most different first, each with both distributions side by side.
import { useState } from 'preact/hooks';
import type { BubbleUpAnswer, BubbleUpSelection } from '../api/types.js';
import { Distribution } from '../charts/distribution.js';
import { formatNumber } from '../format.js';
import { formatDateTime } from '../time.js';
import { ErrorNotice, Spinner } from './ui.js';

/** Columns shown before "show more". */
const FIRST = 6;

export function BubbleUpPanel(props: {
  selection: BubbleUpSelection;
  /** How the selected values read, when known (`sli_fast = false`); else the column's range. */
  label?: string;
  answer?: BubbleUpAnswer;
  error?: unknown;
  onClose: () => void;
  onFilter?: (column: string, value: string | null) => void;
}) {
  const s = props.selection;
  const a = props.answer;
  const [all, setAll] = useState(false);
  const shown = a ? (all ? a.columns : a.columns.slice(0, FIRST)) : [];
  return (
    <section class="panel" aria-labelledby="bubbleup-h" data-testid="bubbleup">
      <div class="row" style={{ marginBottom: '10px' }}>
        <h2 id="bubbleup-h" style={{ margin: 0 }}>
          BubbleUp
        </h2>
        <span class="small muted">
          {formatDateTime(s.start_time)} – {formatDateTime(s.end_time)}
          {props.label ? ` · ${props.label}` : s.column ? ` · ${s.column} ${s.lower === s.upper ? `= ${formatNumber(s.lower)}` : `${formatNumber(s.lower)} – ${formatNumber(s.upper)}`}` : ''}
        </span>
        <span class="spacer" />
        <span class="legend-inline">
          <span class="row">
            <span class="swatch" style={{ background: 'var(--selection)' }} /> selection
          </span>
          <span class="row">
            <span class="swatch" style={{ background: 'var(--baseline)' }} /> baseline
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
            {formatNumber(a.selection.events)} selected events against {formatNumber(a.baseline.events)} others
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
