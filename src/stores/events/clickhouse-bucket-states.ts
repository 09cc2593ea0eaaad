// ClickHouse's states statement of the bucket-result cache (statements.ts: BucketStateStatements;
// the merge is src/query/bucket-states.ts): one GROUP BY of the filtered events per
// (breakdowns, time bucket); lists are arrays of tuples, answered as JSON arrays.
import { clickhouseQuery } from './clickhouse-query.js';
import { numeric, numericStateSql, spanLastBucket, stateColumns, type BucketStateStatements, type StateColumn, type QueryModel } from './statements.js';

function stateSql(m: QueryModel, c: StateColumn): string {
  const d = m.dialect;
  const n = c.field ? numeric(d, c.field) : '';
  const pairIf = (a: string, b: string, cond: string) => `groupArrayIf((toFloat64(assumeNotNull(${a})), toFloat64(assumeNotNull(${b}))), ${cond})`;
  const plain = numericStateSql(d, c);
  if (plain !== undefined) return plain;
  switch (c.kind) {
    case 'distinct':
      return `groupUniqArray(${c.field!.alias})`;
    case 'values':
      return pairIf(n, '__w', `isNotNull(${n})`);
    case 'rates':
      return pairIf(d.epochUs('__t'), n, `isNotNull(${n})`);
    case 'spans':
      return pairIf(spanLastBucket(d, m.bucketUs), '__w', '1');
    default:
      throw new Error(`no state ${c.kind}`);
  }
}

export const clickhouseBucketStates: BucketStateStatements = {
  states(m, maxRows) {
    const { from } = clickhouseQuery.scan(m);
    const keys = [...m.keys.map((k) => k.alias), '__b'];
    const cols = [...keys, 'count(*) AS __rows', 'sum(__w) AS __wsum', ...stateColumns(m).map((c) => `${stateSql(m, c)} AS ${c.name}`)];
    return `SELECT ${cols.join(', ')} FROM ${from} GROUP BY ${keys.join(', ')} LIMIT ${Math.trunc(maxRows)}`;
  },
};
