// The Query of a request: QueryInput validates it (ajv) wherever a body carries one (POST
// /1/queries, a trigger's inline query as TriggerQueryInput, BubbleUp's, the event browser's); what
// it cannot say (a null where an op needs a member, the time rules, what orders and havings refer
// to, expressions) is src/query/validate.ts's checkQuerySpec. The Query as answered is
// ../schemas.ts's QuerySchema.
import { Type, type TSchema, type TUnsafe } from '@sinclair/typebox';
import { COMPARE_TIME_OFFSETS, FILTER_OPS, HAVING_OPS, LIST_FILTER_OPS, NO_COLUMN_OPS, NO_VALUE_FILTER_OPS, QUERY_OPS, type QueryOp } from '../../../query/spec.js';
import { MAX_FILTER_VALUES, MAX_ITEMS, MAX_LIMIT, type QueryInput as CheckedQuery } from '../../../query/validate.js';
import { NOT_BLANK } from '../../../validation.js';
import { enumOf, orNull } from '../schemas.js';

/** A member that may only be absent or null ("not set"): anything else is `must not be given here`. */
const notGiven = (description: string) => Type.Unsafe<null>({ not: { type: ['string', 'number', 'boolean', 'array', 'object'] }, description });
/** JSON Schema `if`/`then`: what an item whose `field` is one of `values` must be (problems name the item's members, never a union's branches). */
const whenOneOf = (field: string, values: readonly string[], then: Record<string, unknown>) => ({
  if: { properties: { [field]: { enum: [...values] } }, required: [field] },
  then,
});
const without = <T extends string>(values: readonly T[], out: readonly string[]) => values.filter((v) => !out.includes(v));
const COLUMN_OPS = without(QUERY_OPS, NO_COLUMN_OPS);
const VALUE_FILTER_OPS = without(FILTER_OPS, [...NO_VALUE_FILTER_OPS, ...LIST_FILTER_OPS]);
const list = <T extends TSchema>(item: T, description?: string) =>
  Type.Optional(orNull(Type.Array(item, { maxItems: MAX_ITEMS }), description));
const optionalInteger = (options: Record<string, unknown>) => Type.Optional(orNull(Type.Integer(options)));

/** A calculation of `ops`: COUNT and CONCURRENCY take no column, every other op a non-empty one. */
const calculationInput = (ops: readonly QueryOp[]) =>
  Type.Object(
    {
      op: enumOf(ops),
      column: Type.Optional(orNull(Type.String(), 'None (absent or null) for COUNT and CONCURRENCY; required by every other op.')),
    },
    {
      allOf: [
        whenOneOf('op', NO_COLUMN_OPS, { properties: { column: notGiven('COUNT and CONCURRENCY take no column.') } }),
        whenOneOf('op', COLUMN_OPS, { required: ['column'], properties: { column: { type: ['string', 'null'], minLength: 1 } } }),
      ],
    },
  );
const FilterInput = Type.Object(
  {
    column: orNull(Type.String({ minLength: 1 }), 'A column (null is refused: a filter on no column cannot be evaluated).'),
    op: enumOf(FILTER_OPS),
    value: Type.Optional(
      Type.Unsafe<string | number | boolean | string[] | null>({
        type: ['string', 'number', 'boolean', 'array', 'null'],
        items: { type: 'string' },
        maxItems: MAX_FILTER_VALUES,
        description: 'None for exists and does-not-exist; 1 to 1000 strings for in and not-in; one string, number or boolean otherwise.',
      }),
    ),
  },
  {
    allOf: [
      whenOneOf('op', NO_VALUE_FILTER_OPS, { properties: { value: notGiven('exists and does-not-exist take no value.') } }),
      whenOneOf('op', LIST_FILTER_OPS, { required: ['value'], properties: { value: { type: ['array', 'null'], minItems: 1 } } }),
      whenOneOf('op', VALUE_FILTER_OPS, { required: ['value'], properties: { value: { type: ['string', 'number', 'boolean', 'null'] } } }),
    ],
  },
);
const NOT_HEATMAP = QUERY_OPS.filter((op) => op !== 'HEATMAP');
const HavingInput = Type.Object({
  calculate_op: enumOf(NOT_HEATMAP),
  column: Type.Optional(orNull(Type.String({ minLength: 1 }))),
  op: enumOf(HAVING_OPS),
  value: orNull(Type.Number(), 'A number (null is missing).'),
});
const HAVINGS_DESCRIPTION = 'Each names one of the calculations (calculate_op and column).';
const queryInputFields = {
  id: Type.Optional(Type.Unsafe<string>({ readOnly: true, description: 'Read-only: ignored in a request.' })),
  calculations: list(calculationInput(QUERY_OPS), 'Omitted, null or empty: COUNT.'),
  filters: list(FilterInput),
  filter_combination: Type.Optional(orNull(enumOf(['AND', 'OR'] as const))),
  breakdowns: list(Type.String({ minLength: 1 })),
  orders: list(
    Type.Object({
      column: Type.Optional(orNull(Type.String({ minLength: 1 }))),
      op: Type.Optional(orNull(enumOf(NOT_HEATMAP))),
      order: Type.Optional(orNull(enumOf(['ascending', 'descending'] as const))),
    }),
    'Each names a breakdown (column) or a calculation (op and column).',
  ),
  havings: list(HavingInput, HAVINGS_DESCRIPTION),
  limit: optionalInteger({ minimum: 1, maximum: MAX_LIMIT, description: 'At most 1000 on create; 10000 for disable_series query results.' }),
  time_range: optionalInteger({ minimum: 1 }),
  start_time: optionalInteger({ minimum: 1 }),
  end_time: optionalInteger({ minimum: 1 }),
  granularity: optionalInteger({ minimum: 0, description: '0 or absent: automatic; otherwise T/1000…T seconds for a query of duration T.' }),
  calculated_fields: list(
    Type.Object({
      name: Type.String({ pattern: NOT_BLANK, description: 'Not blank; unique in the query.' }),
      expression: Type.String({ pattern: NOT_BLANK, description: 'Not blank; must parse.' }),
    }),
  ),
  compare_time_offset_seconds: Type.Optional(orNull(enumOf(COMPARE_TIME_OFFSETS))),
};
const QUERY_INPUT_DESCRIPTION = 'A query specification. `null` members are not set; unknown members are ignored and not echoed.';
/** A request's Query (POST /1/queries, a trigger's, BubbleUp's, the event browser's). */
export const QueryInput = Type.Unsafe<CheckedQuery>(Type.Object(queryInputFields, { description: QUERY_INPUT_DESCRIPTION })) as TUnsafe<CheckedQuery> & { type: 'object' };
/**
 * A trigger's inline Query: no HEATMAP or CONCURRENCY; no orders, limit, start_time or end_time (the
 * trigger's frequency runs it). Exactly one calculation (none: COUNT) and at most one having are
 * src/domain/trigger-bodies.ts's (the lists' limits stay the Query's 100, checked first).
 */
export const TriggerQueryInput = Type.Unsafe<CheckedQuery>(
  Type.Object(
    {
      ...queryInputFields,
      calculations: list(calculationInput(without(QUERY_OPS, ['HEATMAP', 'CONCURRENCY']) as QueryOp[]), 'Exactly one; omitted, null or empty: COUNT.'),
      havings: list(HavingInput, `At most one. ${HAVINGS_DESCRIPTION}`),
      orders: Type.Optional(notGiven('A trigger query has no orders.')),
      limit: Type.Optional(notGiven('A trigger query has no limit.')),
      start_time: Type.Optional(notGiven('A trigger query uses time_range only.')),
      end_time: Type.Optional(notGiven('A trigger query uses time_range only.')),
    },
    { description: `${QUERY_INPUT_DESCRIPTION} A trigger's: one calculation, at most one having, no orders, limit, start_time or end_time.` },
  ),
) as TUnsafe<CheckedQuery> & { type: 'object' };
