// DuckDB's states statement of the bucket-result cache (statements.ts: BucketStateStatements;
// the merge is src/query/bucket-states.ts): one GROUP BY of the filtered events per
// (breakdowns, time bucket).
import { duckdbQuery } from './duckdb-query.js';
import { numeric, numericStateSql, spanLastBucket, stateColumns, type BucketStateStatements, type StateColumn, type QueryModel } from './statements.js';

function stateSql(m: QueryModel, c: StateColumn): string {
  const d = m.dialect;
  const n = c.field ? numeric(d, c.field) : '';
  const pair = (a: string, b: string) => `list([CAST(${a} AS DOUBLE), CAST(${b} AS DOUBLE)])`;
  const plain = numericStateSql(d, c);
  if (plain !== undefined) return plain;
  switch (c.kind) {
    case 'distinct':
      return `list(DISTINCT ${c.field!.alias}) FILTER (WHERE ${c.field!.alias} IS NOT NULL)`;
    case 'values':
      return `${pair(n, '__w')} FILTER (WHERE ${n} IS NOT NULL)`;
    case 'rates':
      return `${pair(d.epochUs('__t'), n)} FILTER (WHERE ${n} IS NOT NULL)`;
    case 'spans':
      return pair(spanLastBucket(d, m.bucketUs), '__w');
    default:
      throw new Error(`no state ${c.kind}`);
  }
}

export const duckdbBucketStates: BucketStateStatements = {
  states(m, maxRows) {
    const { prelude, from } = duckdbQuery.scan(m);
    const keys = [...m.keys.map((k) => k.alias), '__b'];
    const cols = [...keys, 'count(*) AS __rows', 'sum(__w) AS __wsum', ...stateColumns(m).map((c) => `${stateSql(m, c)} AS ${c.name}`)];
    return `${prelude}\nSELECT ${cols.join(', ')} FROM ${from} GROUP BY ${keys.join(', ')} LIMIT ${Math.trunc(maxRows)}`;
  },
};
