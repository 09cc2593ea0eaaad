// The events one OTLP request makes, per dataset, built as columns (stores/events/columns.ts)
// the way /1/batch builds them, so that the writer, the column registry and durability are the
// same. The per-event limits of /1/batch apply (fields per event, bytes per event, bytes per
// string): an event over them is refused, and so is the request item (span, log record, data
// points) it came from, which the answer's partial_success counts.
import { ColumnsBuilder, type EventColumns } from '../../stores/events/columns.js';
import type { Scalar } from '../../stores/events/types.js';
import { EventRejected, TOO_MANY_COLUMNS, type IngestLimits } from '../normalise.js';
import { FieldList, addAttributes, sampleRateOf, type FieldTarget } from './attributes.js';
import type { OtlpRequest, ResourceItems, Scope } from './model.js';

/** One dataset's events of a request. */
export interface OtlpGroup {
  /** The dataset name the translation chose (resolved, and created if need be, by the caller). */
  dataset: string;
  columns: EventColumns;
  /** Each row's request item: a span or log record index, or for metrics the row's own number. */
  rowItem: Uint32Array;
  /** Each row's weight in the rejected count: 1, or for metrics its number of data points. */
  rowWeight: Uint32Array;
}

/** An item refused while translating (it may have other rows that were stored). */
export interface Refusal {
  item: number;
  weight: number;
  reason: string;
}

export interface Translated {
  groups: OtlpGroup[];
  /** Items in the request: spans, log records or data points. */
  items: number;
  refused: Refusal[];
}

/** Builds one dataset's rows; a FieldTarget for the row under way. */
export class Rows implements FieldTarget {
  private readonly builder: ColumnsBuilder;
  private readonly rowItem: Uint32Array;
  private readonly rowWeight: Uint32Array;
  private row = 0;
  private bytes = 0;

  constructor(
    readonly dataset: string,
    capacity: number,
    private readonly limits: IngestLimits,
  ) {
    this.builder = new ColumnsBuilder(capacity);
    this.rowItem = new Uint32Array(capacity);
    this.rowWeight = new Uint32Array(capacity);
  }

  set(name: string, value: Scalar): void {
    if (typeof value === 'string') {
      const max = this.limits.maxStringBytes;
      if (value.length * 3 > max && Buffer.byteLength(value) > max) {
        throw new EventRejected(`field ${JSON.stringify(name.slice(0, 128))} is longer than ${max} bytes`);
      }
      this.bytes += name.length + value.length;
    } else this.bytes += name.length + 8;
    this.builder.set(name, value);
    if (this.builder.size > this.limits.maxFieldsPerEvent) throw new EventRejected(TOO_MANY_COLUMNS);
  }

  /** Ends the row under way: an event of `item`. */
  end(timeUs: number, samplerate: number, item: number, weight = 1): void {
    if (this.bytes > this.limits.maxEventBytes) throw new EventRejected(`event is larger than ${this.limits.maxEventBytes} bytes`);
    this.builder.endRow(timeUs, samplerate);
    this.rowItem[this.row] = item;
    this.rowWeight[this.row] = weight;
    this.row++;
    this.bytes = 0;
  }

  /** Drops the row under way. */
  abandon(): void {
    this.builder.abandonRow();
    this.bytes = 0;
  }

  finish(): OtlpGroup {
    const n = this.row;
    return { dataset: this.dataset, columns: this.builder.finish(), rowItem: this.rowItem.subarray(0, n), rowWeight: this.rowWeight.subarray(0, n) };
  }
}

/**
 * Builds a row with `fill`; a refusal (EventRejected) drops the row and is recorded against
 * `item`. Other errors are bugs and propagate.
 */
export function addRow(rows: Rows, refused: Refusal[], item: number, weight: number, fill: () => { timeUs: number; samplerate: number }): void {
  try {
    const { timeUs, samplerate } = fill();
    rows.end(timeUs, samplerate, item, weight);
  } catch (err) {
    rows.abandon();
    if (!(err instanceof EventRejected)) throw err;
    refused.push({ item, weight, reason: err.message });
  }
}

/** One Rows per dataset name, in first-seen order. */
export class RowsByDataset {
  private readonly byName = new Map<string, Rows>();
  constructor(private readonly limits: IngestLimits) {}

  /** `capacity`: the rows this dataset gets in all (callers count them first). */
  get(dataset: string, capacity: () => number): Rows {
    let rows = this.byName.get(dataset);
    if (!rows) this.byName.set(dataset, (rows = new Rows(dataset, capacity(), this.limits)));
    return rows;
  }

  finish(): OtlpGroup[] {
    return [...this.byName.values()].map((r) => r.finish()).filter((g) => g.columns.count > 0);
  }
}

/** What the items of one resource (of traces or logs) share. */
export interface ResourceRows {
  fields: FieldList;
  /** The sample rate its attributes name, if any. */
  rate: number | undefined;
  /** Its dataset's rows. */
  rows: Rows;
}

/**
 * Each resource's fields, sample rate and dataset rows: the dataset is `datasetOf` its service
 * name, and each dataset's columns are sized once for all its rows (`rowsOf` an item).
 */
export function resourceRows<T>(req: OtlpRequest<T>, limits: IngestLimits, datasetOf: (serviceName: string | undefined) => string, rowsOf: (item: T) => number): { byDataset: RowsByDataset; resources: ResourceRows[] } {
  const byDataset = new RowsByDataset(limits);
  const fields = req.map((res) => resourceFields(res));
  const datasets = fields.map((f) => datasetOf(serviceNameOf(f)));
  const rowsPer = new Map<string, number>();
  req.forEach((res, i) => {
    let n = 0;
    for (const sc of res.scopes) for (const item of sc.items) n += rowsOf(item);
    rowsPer.set(datasets[i], (rowsPer.get(datasets[i]) ?? 0) + n);
  });
  const resources = req.map((res, i) => ({ fields: fields[i], rate: sampleRateOf(res.attributes), rows: byDataset.get(datasets[i], () => rowsPer.get(datasets[i])!) }));
  return { byDataset, resources };
}

/** A resource's fields: its attributes, then `resource.schema_url`. */
export function resourceFields(res: ResourceItems<unknown>, keepSampleRate = false): FieldList {
  const out = new FieldList();
  addAttributes(out, res.attributes, keepSampleRate);
  if (res.schemaUrl !== '') out.set('resource.schema_url', res.schemaUrl);
  return out;
}

/** Scope names that mark instrumentation libraries (Honeycomb's list). */
const INSTRUMENTATION_PREFIXES = [
  'io.opentelemetry',
  'opentelemetry.instrumentation',
  'OpenTelemetry.Instrumentation',
  'OpenTelemetry::Instrumentation',
  'go.opentelemetry.io/contrib/instrumentation',
  '@opentelemetry/instrumentation',
  'io.opentelemetry.contrib.php',
  'github.com/open-telemetry/opentelemetry-collector',
  '@honeycombio/',
];

/** A scope's fields: library.name/version (when set), its attributes, `scope.schema_url`. */
export function scopeFields(scope: Scope, schemaUrl: string): FieldList {
  const out = new FieldList();
  if (scope.name !== '') {
    out.set('library.name', scope.name);
    if (INSTRUMENTATION_PREFIXES.some((p) => scope.name.startsWith(p))) out.set('telemetry.instrumentation_library', true);
  }
  if (scope.version !== '') out.set('library.version', scope.version);
  addAttributes(out, scope.attributes);
  if (schemaUrl !== '') out.set('scope.schema_url', schemaUrl);
  return out;
}

/** A 16-byte trace id whose first 8 bytes are zero is stored as its last 8 (16 hex characters). */
export function traceIdText(hex: string): string {
  return hex.length === 32 && hex.startsWith('0000000000000000') ? hex.slice(16) : hex;
}

/** The `service.name` a resource names, as a string (or undefined). */
export function serviceNameOf(fields: FieldList): string | undefined {
  const v = fields.get('service.name');
  return typeof v === 'string' ? v : undefined;
}
