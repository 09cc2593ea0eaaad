// One BubbleUp column: the selection's distribution beside the baseline's. Values (text,
// booleans, numbers with few values) as pairs of bars with their percentages; other numbers as a
// histogram with the two sides' bars in each bin.
import { Fragment } from 'preact';
import type { ColumnDifference } from '../api/types.js';
import { formatNumber, formatPercent } from '../format.js';

const MAX_VALUES = 8;

export function Distribution({ col, onFilter }: { col: ColumnDifference; onFilter?: (value: string | null) => void }) {
  return (
    <div class="dist" data-column={col.column}>
      <header>
        <span class="name" title={col.column}>
          {col.column}
        </span>
        <span class="badge accent" title="How far apart the two distributions are (0–100)">
          {Math.round(col.score * 100)}
        </span>
      </header>
      {col.kind === 'values' ? <Values col={col} onFilter={onFilter} /> : <Histogram col={col} />}
    </div>
  );
}

function Values({ col, onFilter }: { col: ColumnDifference; onFilter?: (value: string | null) => void }) {
  const values = (col.values ?? []).slice(0, MAX_VALUES);
  const max = Math.max(0.0001, ...values.map((v) => Math.max(v.selection, v.baseline)));
  return (
    <div class="vals">
      {values.map((v) => (
        <Fragment key={v.value ?? '\u0000'}>
          <div class="label" title={v.value ?? '(missing)'}>
            {onFilter ? (
              <button class="group-link" title="Add to the query's filters" onClick={() => onFilter(v.value)}>
                {v.value ?? '(missing)'}
              </button>
            ) : (
              v.value ?? '(missing)'
            )}
          </div>
          <div class="bars" title={`selection ${formatPercent(v.selection)}, baseline ${formatPercent(v.baseline)}`}>
            <div class="row" style={{ gap: '6px', flexWrap: 'nowrap' }}>
              <div class="bar sel" style={{ width: `${(v.selection / max) * 75}%` }} />
              <span class="small">{formatPercent(v.selection)}</span>
            </div>
            <div class="row" style={{ gap: '6px', flexWrap: 'nowrap' }}>
              <div class="bar base" style={{ width: `${(v.baseline / max) * 75}%` }} />
              <span class="small muted">{formatPercent(v.baseline)}</span>
            </div>
          </div>
        </Fragment>
      ))}
      {(col.values?.length ?? 0) > MAX_VALUES && <div class="muted small">+{col.values!.length - MAX_VALUES} more values</div>}
    </div>
  );
}

function Histogram({ col }: { col: ColumnDifference }) {
  const bins = col.bins ?? [];
  const max = Math.max(0.0001, ...bins.map((b) => Math.max(b.selection, b.baseline)));
  const first = bins[0];
  const last = bins[bins.length - 1];
  return (
    <div>
      <div class="hist" role="img" aria-label={`Histogram of ${col.column}, selection against baseline`}>
        {bins.map((b, i) => (
          <div class="bin" key={i} title={`${formatNumber(b.lower)} – ${formatNumber(b.upper)}: selection ${formatPercent(b.selection)}, baseline ${formatPercent(b.baseline)}`}>
            <div class="bar sel" style={{ height: `${(b.selection / max) * 100}%` }} />
            <div class="bar base" style={{ height: `${(b.baseline / max) * 100}%` }} />
          </div>
        ))}
      </div>
      <div class="row small muted">
        <span>≤ {formatNumber(first?.upper)}</span>
        <span class="spacer" />
        <span>≥ {formatNumber(last?.lower)}</span>
      </div>
      {col.missing && (col.missing.selection > 0 || col.missing.baseline > 0) && (
        <div class="small muted">
          missing: {formatPercent(col.missing.selection)} of the selection, {formatPercent(col.missing.baseline)} of the baseline
        </div>
      )}
    </div>
  );
}
