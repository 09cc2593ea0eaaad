// Where the ingest writer puts a dataset's new fields (stores/events/placement.ts has the
// layout): a typed column of its own while the table has room within the event store's hot-column
// budget, else an attribute in the bucket with the fewest expected values per event, so that a
// lookup in any bucket reads about as many values as in any other. A quarter of the budget is
// kept for fields that turn out to be frequent later (promotion: attribute-promotion.ts); the densest of a
// group's new fields take the free columns first. Densities (the share of a group's events that
// have the field) are this process's estimates: after a restart the fields already placed count
// as average.
import { MAX_ATTRIBUTE_BUCKETS, attributePlacement, columnPlacement, emptiestBucket, isColumn, parsePlacement } from '../stores/events/placement.js';

/** Of the hot-column budget, the share new fields may take when they first appear (the rest is for promotion). */
const NEW_FIELD_SHARE = 0.75;
/** A field's assumed share of events when this process has not seen it placed. */
const UNKNOWN_DENSITY = 0.1;

export interface PlacementState {
  /** Field columns the dataset has (fields with a column, moving ones included). */
  hot: number;
  /** Expected attribute values per event in each bucket. */
  load: number[];
  /** The dataset's next free field number. */
  next: number;
}

/** The placement state of a dataset from its registered placements, with densities known to this process. */
export function placementState(physicals: Iterable<string>, next: number, density: (physical: string) => number | undefined): PlacementState {
  const state: PlacementState = { hot: 0, load: new Array<number>(MAX_ATTRIBUTE_BUCKETS).fill(0), next };
  for (const physical of physicals) {
    if (isColumn(physical)) state.hot++;
    else {
      const a = parsePlacement(physical).attribute!;
      state.load[a.bucket] += density(physical) ?? UNKNOWN_DENSITY;
    }
  }
  return state;
}

/** How many columns new fields may take of a budget. */
export const newFieldColumns = (budget: number): number => Math.floor(budget * NEW_FIELD_SHARE);

/**
 * Places new fields, densest first: columns while the dataset has fewer than its share of the
 * budget for new fields, attributes after, in the table's `buckets`. `fields`: name → density in
 * [0, 1]. Updates `state`. Returns name → placement.
 */
export function placeFields(state: PlacementState, budget: number, buckets: number, fields: ReadonlyMap<string, number>): Map<string, string> {
  const out = new Map<string, string>();
  const order = [...fields].sort((a, b) => b[1] - a[1]);
  for (const [name, density] of order) {
    if (state.hot < newFieldColumns(budget)) {
      state.hot++;
      out.set(name, columnPlacement(state.next++));
    } else {
      const bucket = emptiestBucket(state.load, buckets);
      state.load[bucket] += density;
      out.set(name, attributePlacement({ key: state.next++, bucket }));
    }
  }
  return out;
}

/** Events over which a field's density halves in weight (the recent past counts most). */
const HALF_LIFE_EVENTS = 5000;
/** An attribute present in at least this share of recent events is worth a column of its own. */
const PROMOTE_DENSITY = 0.25;
/** Events seen before any promotion (a dataset's first batches say little). */
const PROMOTE_AFTER_EVENTS = 1000;

/**
 * How often each attribute field of a dataset comes in recent events (decaying counts), to find
 * one worth a column of its own (promotion): the densest one present in at least a quarter of
 * recent events. Kept in memory only: after a restart it learns again.
 */
export class AttributeDensity {
  private events = 0;
  private readonly present = new Map<string, number>();

  /** A committed group of `events` events in which each attribute field named had `present[name]` values. */
  record(events: number, present: ReadonlyMap<string, number>): void {
    const decay = 0.5 ** (events / HALF_LIFE_EVENTS);
    this.events = this.events * decay + events;
    for (const [name, n] of this.present) this.present.set(name, n * decay);
    for (const [name, n] of present) this.present.set(name, (this.present.get(name) ?? 0) + n);
    // (Forget fields gone quiet, so the map stays the size of what is current.)
    for (const [name, n] of this.present) if (n < 1) this.present.delete(name);
  }

  /** The field to promote now, if one is dense enough. */
  candidate(): string | undefined {
    if (this.events < PROMOTE_AFTER_EVENTS) return undefined;
    let best: string | undefined;
    let most = PROMOTE_DENSITY * this.events;
    for (const [name, n] of this.present) {
      if (n >= most) {
        best = name;
        most = n;
      }
    }
    return best;
  }

  /** Stops counting a field (promoted, or deleted). */
  forget(name: string): void {
    this.present.delete(name);
  }
}
