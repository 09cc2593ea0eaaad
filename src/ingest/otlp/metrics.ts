// OTLP metrics → events, as Honeycomb stores them (docs/otlp.md; husky's otlp/metrics.go). Data
// points of one request share an event when their time (truncated to the second), their
// resource's attributes and their own attributes are the same; each metric's name is a field
// holding its value (histograms and summaries: several `<name>.…` fields). Every event has
// meta.signal_type `metric`, meta.annotation_type `metric_event` and sample rate 1.
// Precedence when names collide: resource attributes, then data-point attributes, then the
// meta fields, then the metric values (written lowest first, so that the later write wins).
// Metrics have no sample rate, so sampleRate attributes are ordinary fields here.
//
// Where Honeycomb's public material is silent or wrong, docs/otlp.md says what Waggle does:
// exponential histograms (percentiles from their bucket bounds), `.p05` (Honeycomb's draft
// computes the median there), points without a recorded value (skipped), no sum (no .sum/.avg).
import type { Scalar } from '../../stores/events/types.js';
import { addAttributes, type FieldList } from './attributes.js';
import { metricsDataset } from './datasets.js';
import { ArrayValue, Bytes, KvList, type ExponentialHistogramPoint, type HistogramPoint, type KeyValue, type Metric, type OtlpRequest, type SummaryPoint, type Value } from './model.js';
import { RowsByDataset, addRow, resourceFields, type Refusal, type Translated } from './rows.js';
import type { IngestLimits } from '../normalise.js';

/** Data points flagged "no recorded value" (DataPointFlags bit 0) carry no value: skipped. */
const NO_RECORDED_VALUE = 1;

const PERCENTILES: [string, number][] = [
  ['.p001', 0.001],
  ['.p01', 0.01],
  ['.p05', 0.05],
  ['.p10', 0.1],
  ['.p25', 0.25],
  ['.p50', 0.5],
  ['.p75', 0.75],
  ['.p90', 0.9],
  ['.p95', 0.95],
  ['.p99', 0.99],
  ['.p999', 0.999],
];

/**
 * Percentiles of a histogram given as buckets in ascending order, each with its upper bound
 * (undefined: the overflow bucket, which has none): for each q, the bound of the last bucket
 * whose cumulative share of the count is at most q, or the first bucket's bound if there is none.
 */
export function bucketPercentiles(count: number, bucketCounts: number[], upperBounds: (number | undefined)[]): [string, number][] {
  if (count <= 0 || bucketCounts.length === 0 || upperBounds.length === 0 || upperBounds[0] === undefined) return [];
  const shares: number[] = [];
  let total = 0;
  for (const c of bucketCounts) shares.push((total += c) / count);
  return PERCENTILES.map(([suffix, q]) => {
    let bound = upperBounds[0]!;
    for (let i = 0; i < shares.length && shares[i] <= q; i++) if (upperBounds[i] !== undefined) bound = upperBounds[i]!;
    return [suffix, bound];
  });
}

/**
 * An exponential histogram's buckets in ascending order with their upper bounds: negative
 * buckets (index i holds (-base^(i+1), -base^i]) from the highest index down, the zero bucket
 * (bound 0), then positive buckets (index i holds (base^i, base^(i+1)]); base = 2^(2^-scale).
 */
export function exponentialBuckets(p: ExponentialHistogramPoint): { counts: number[]; bounds: number[] } {
  const base = (i: number) => 2 ** (i * 2 ** -p.scale);
  const counts: number[] = [];
  const bounds: number[] = [];
  const neg = p.negative.bucketCounts;
  for (let k = neg.length - 1; k >= 0; k--) {
    counts.push(neg[k]);
    bounds.push(-base(p.negative.offset + k));
  }
  counts.push(p.zeroCount);
  bounds.push(0);
  p.positive.bucketCounts.forEach((c, k) => {
    counts.push(c);
    bounds.push(base(p.positive.offset + k + 1));
  });
  return { counts, bounds };
}

/** `<name>.p` + the quantile's first three decimals less one trailing zero (0.5 → .p50, 0.999 → .p999). */
export const quantileField = (name: string, q: number) => `${name}.p${q.toFixed(3).slice(2).replace(/0$/, '')}`;

function countSumAvg(out: Map<string, Scalar>, name: string, count: number, sum: number | undefined): void {
  out.set(`${name}.count`, count);
  if (sum === undefined || !Number.isFinite(sum)) return;
  out.set(`${name}.sum`, sum);
  if (count > 0) out.set(`${name}.avg`, sum / count);
}

/** A metric's fields for one of its points. */
function pointValues(out: Map<string, Scalar>, m: Metric, i: number): void {
  const { name } = m;
  switch (m.type) {
    case 'gauge':
    case 'sum': {
      const v = m.points[i].value;
      if (v !== undefined && Number.isFinite(v)) out.set(name, v);
      return;
    }
    case 'histogram': {
      const p: HistogramPoint = m.points[i];
      countSumAvg(out, name, p.count, p.sum);
      const bounds = p.bucketCounts.map((_, k) => p.explicitBounds[k]);
      for (const [suffix, v] of bucketPercentiles(p.count, p.bucketCounts, bounds)) out.set(name + suffix, v);
      return;
    }
    case 'exponential_histogram': {
      const p = m.points[i];
      countSumAvg(out, name, p.count, p.sum);
      const { counts, bounds } = exponentialBuckets(p);
      for (const [suffix, v] of bucketPercentiles(p.count, counts, bounds)) if (Number.isFinite(v)) out.set(name + suffix, v);
      return;
    }
    case 'summary': {
      const p: SummaryPoint = m.points[i];
      countSumAvg(out, name, p.count, p.sum);
      for (const { quantile, value } of p.quantiles) {
        if (!Number.isFinite(value) || !(quantile >= 0 && quantile <= 1)) continue;
        out.set(quantile === 0 ? `${name}.min` : quantile === 1 ? `${name}.max` : quantileField(name, quantile), value);
      }
    }
  }
}

/** A value as the grouping key sees it: type and content. */
function valueKey(v: Value): unknown {
  if (v instanceof Bytes) return { b: v.base64 };
  if (v instanceof ArrayValue) return { a: v.values.map(valueKey) };
  if (v instanceof KvList) return { m: attributesKey(v.values) };
  return v;
}

/** Attributes as a key: sorted by name, values with their types. */
function attributesKey(attrs: KeyValue[]): unknown[] {
  return [...attrs].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)).map((kv) => [kv.key, valueKey(kv.value)]);
}

interface Group {
  timeUs: number;
  resource: FieldList;
  attributes: KeyValue[];
  values: Map<string, Scalar>;
  /** Data points merged into this event. */
  points: number;
}

export function translateMetrics(req: OtlpRequest<Metric>, datasetHeader: string | undefined, limits: IngestLimits): Translated {
  const groups = new Map<string, Group>();
  const refused: Refusal[] = [];
  let items = 0;
  let rowNumber = 0;
  for (const res of req) {
    const resource = resourceFields(res, true);
    const resourceKey = JSON.stringify(attributesKey(res.attributes));
    for (const sc of res.scopes) {
      for (const m of sc.items) {
        for (let i = 0; i < m.points.length; i++) {
          items++;
          const p = m.points[i];
          if (p.flags & NO_RECORDED_VALUE) continue;
          if (m.name === '') {
            refused.push({ item: rowNumber++, weight: 1, reason: 'a metric has no name' });
            continue;
          }
          const timeUs = Math.floor(p.timeUs / 1e6) * 1e6;
          const key = `${resourceKey}\u0000${timeUs}\u0000${JSON.stringify(attributesKey(p.attributes))}`;
          let g = groups.get(key);
          if (!g) groups.set(key, (g = { timeUs, resource, attributes: p.attributes, values: new Map(), points: 0 }));
          g.points++;
          pointValues(g.values, m, i);
        }
      }
    }
  }
  const byDataset = new RowsByDataset(limits);
  const rows = byDataset.get(metricsDataset(datasetHeader), () => groups.size);
  for (const g of groups.values()) {
    addRow(rows, refused, rowNumber++, g.points, () => {
      for (const [k, v] of g.values) rows.set(k, v);
      rows.set('meta.signal_type', 'metric');
      rows.set('meta.annotation_type', 'metric_event');
      addAttributes(rows, g.attributes, true);
      g.resource.writeTo(rows);
      return { timeUs: g.timeUs, samplerate: 1 };
    });
  }
  return { groups: byDataset.finish(), items, refused };
}
