// The query page's "Show expected band": when on, the result's anomaly bands (GET …/bands, a
// Waggle extension: the same query over the same window on each of the last 7 days, or the last 4
// weeks, with the signals' model) are fetched and drawn on its charts, points outside ringed.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { getBands } from '../api/endpoints.js';
import type { BandsAnswer } from '../api/types.js';
import { bandsByCalc, outsideCount, type LineBand } from '../bands.js';
import type { ShapedResult } from '../results.js';

type Seasonality = 'day' | 'week';

export interface ResultBands {
  on: boolean;
  setOn: (on: boolean) => void;
  seasonality: Seasonality;
  setSeasonality: (s: Seasonality) => void;
  loading: boolean;
  error?: unknown;
  bands?: Map<string, (LineBand | undefined)[]>;
}

/** The bands of a result while the toggle is on (fetched again for another result or seasonality). */
export function useResultBands(dataset: string, resultId: string | undefined, shaped: ShapedResult | undefined): ResultBands {
  const [on, setOn] = useState(false);
  const [seasonality, setSeasonality] = useState<Seasonality>('day');
  const [state, setState] = useState<{ answer?: BandsAnswer; error?: unknown; loading: boolean }>({ loading: false });
  useEffect(() => {
    if (!on || !resultId) return setState({ loading: false });
    const ctl = new AbortController();
    setState({ loading: true });
    getBands(dataset, resultId, seasonality, ctl.signal).then(
      (answer) => !ctl.signal.aborted && setState({ answer, loading: false }),
      (error) => !ctl.signal.aborted && setState({ error, loading: false }),
    );
    return () => ctl.abort();
  }, [on, seasonality, dataset, resultId]);
  const bands = useMemo(() => (on && state.answer && shaped ? bandsByCalc(shaped, state.answer) : undefined), [on, state.answer, shaped]);
  return { on, setOn, seasonality, setSeasonality, loading: state.loading, error: state.error, bands };
}

export function BandToggle({ b }: { b: ResultBands }) {
  const outside = b.bands ? outsideCount(b.bands) : 0;
  return (
    <span class="band-toggle" data-testid="band-toggle">
      <label>
        <input type="checkbox" checked={b.on} onChange={(e) => b.setOn((e.target as HTMLInputElement).checked)} /> Show expected band
      </label>
      {b.on && (
        <select aria-label="Expected band from" value={b.seasonality} onChange={(e) => b.setSeasonality((e.target as HTMLSelectElement).value as Seasonality)}>
          <option value="day">from the same time on the last 7 days</option>
          <option value="week">from the same time on the last 4 weeks</option>
        </select>
      )}
      {b.on && b.loading && <span> learning the band…</span>}
      {b.on && b.bands && (
        <span data-testid="band-note" class={outside > 0 ? 'band-outside' : ''}>
          {' '}
          {outside === 0 ? 'every point inside its band' : `${outside} ${outside === 1 ? 'point' : 'points'} outside (ringed)`}
        </span>
      )}
      {b.on && b.error !== undefined && <span class="band-outside"> the band could not be computed</span>}
    </span>
  );
}
