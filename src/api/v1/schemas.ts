// TypeBox schemas of /1/ resources: they validate requests, type the handlers and make up the
// served OpenAPI document.
import { Type, type Static, type TSchema, type TString, type TUnsafe } from '@sinclair/typebox';
import { COMPARE_TIME_OFFSETS, FILTER_OPS, HAVING_OPS, QUERY_OPS } from '../../query/spec.js';
import { MAX_FILTER_VALUES } from '../../query/validate.js';
import { MAX_TAGS, TAG_KEY_MAX_LENGTH, TAG_KEY_PATTERN, TAG_VALUE_MAX_LENGTH, TAG_VALUE_PATTERN } from '../../domain/tags.js';

export const ErrorBody = Type.Object({ error: Type.String() }, { $id: 'Error' });

export const DatasetSettings = Type.Object({ delete_protected: Type.Optional(Type.Boolean()) });

export const Dataset = Type.Object({
  name: Type.String(),
  description: Type.String(),
  settings: DatasetSettings,
  expand_json_depth: Type.Integer(),
  slug: Type.String(),
  regular_columns_count: Type.Union([Type.Integer(), Type.Null()]),
  last_written_at: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
});

export const DatasetCreationPayload = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  description: Type.Optional(Type.String({ maxLength: 1024 })),
  expand_json_depth: Type.Optional(Type.Integer({ minimum: 0, maximum: 10 })),
  settings: Type.Optional(
    Type.Object({ delete_protected: Type.Optional(Type.Boolean({ description: 'Omitted: true (a new dataset is delete protected).' })) }),
  ),
});

/** Every field is optional: an omitted one keeps its current value (the Terraform provider sends only what changed). */
export const DatasetUpdatePayload = Type.Object({
  description: Type.Optional(Type.String({ maxLength: 1024 })),
  expand_json_depth: Type.Optional(Type.Integer({ minimum: 0, maximum: 10 })),
  settings: Type.Optional(DatasetSettings),
});

export const DatasetDefinition = Type.Union([
  Type.Object({
    name: Type.String({ maxLength: 255 }),
    column_type: Type.Optional(Type.Union([Type.Literal('column'), Type.Literal('derived_column')])),
  }),
  Type.Null(),
]);

export const SlugParams = Type.Object({ datasetSlug: Type.String() });

/** The path of one object of a dataset (or of `__all__`): `{datasetSlug}/{<id>}`. */
export const itemParams = <K extends string>(id: K) =>
  Type.Object({ datasetSlug: Type.String(), [id]: Type.String() } as { datasetSlug: TString } & Record<K, TString>);

/**
 * `schema` or `null` (what a client sends for "not set"), as one JSON type list (`["string",
 * "null"]`): a wrong value gets one problem, where a union would get one per branch.
 */
export const orNull = <T extends TSchema>(schema: T & { type: string }, description?: string): TUnsafe<Static<T> | null> =>
  Type.Unsafe<Static<T> | null>({
    ...schema,
    type: [schema.type, 'null'],
    // An enumeration lists null too, or the type list's null would still be refused.
    ...(Array.isArray(schema.enum) ? { enum: [...(schema.enum as unknown[]), null] } : {}),
    ...(description === undefined ? {} : { description }),
  });

/**
 * Honeycomb's Tag (`{key, value}`), the one schema of the labels boards, SLOs and triggers carry;
 * its rules are src/domain/tags.ts's.
 */
export const TagSchema = Type.Object({
  // No minLength: the patterns refuse "" (one problem, `invalid`; a
  // minLength 1 would add a `missing` one).
  key: Type.String({ maxLength: TAG_KEY_MAX_LENGTH, pattern: TAG_KEY_PATTERN.source, description: 'Lowercase letters only.' }),
  value: Type.String({
    maxLength: TAG_VALUE_MAX_LENGTH,
    pattern: TAG_VALUE_PATTERN.source,
    description: 'A lowercase letter first, then lowercase letters, digits, `/` and `-`.',
  }),
});
/** A request's `tags`: at most 10; omitted or `null` means none. */
export const TagsInput = Type.Optional(orNull(Type.Array(TagSchema, { maxItems: MAX_TAGS })));
/** An answer's `tags`: absent when there are none. */
export const tagsOutput = (what: string) => Type.Optional(Type.Array(TagSchema, { description: `Absent when the ${what} has no tags.` }));

/** The path of one board (and of its views). */
export const BoardParams = Type.Object({ boardId: Type.String() });

/** A JSON Schema enumeration of strings or integers (one type, so a wrong one is one problem). */
export const enumOf = <T extends string | number>(values: readonly T[]) =>
  Type.Unsafe<T>({ type: typeof values[0] === 'number' ? 'integer' : 'string', enum: [...values] }) as TUnsafe<T> & { type: string };
const nullable = (s: TSchema) => Type.Union([s, Type.Null()]);

/** Honeycomb's Query object as answered (a request's is ./shapes/query.ts's QueryInput). */
export const QuerySchema = Type.Object(
  {
    id: Type.Optional(Type.String({ readOnly: true })),
    calculations: Type.Optional(
      Type.Array(Type.Object({ op: enumOf(QUERY_OPS), column: Type.Optional(nullable(Type.String())) }), { maxItems: 100 }),
    ),
    filters: Type.Optional(
      Type.Array(
        Type.Object({
          column: nullable(Type.String()),
          op: enumOf(FILTER_OPS),
          value: Type.Optional(
            Type.Union([Type.Null(), Type.String(), Type.Number(), Type.Boolean(), Type.Array(Type.String(), { maxItems: MAX_FILTER_VALUES })]),
          ),
        }),
        { maxItems: 100 },
      ),
    ),
    filter_combination: Type.Optional(enumOf(['AND', 'OR'] as const)),
    breakdowns: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 100 })),
    orders: Type.Optional(
      Type.Array(
        Type.Object({
          column: Type.Optional(Type.String()),
          op: Type.Optional(enumOf(QUERY_OPS)),
          order: Type.Optional(enumOf(['ascending', 'descending'] as const)),
        }),
        { maxItems: 100 },
      ),
    ),
    havings: Type.Optional(
      Type.Array(
        Type.Object({
          calculate_op: enumOf(QUERY_OPS.filter((op) => op !== 'HEATMAP')),
          column: Type.Optional(nullable(Type.String())),
          op: enumOf(HAVING_OPS),
          value: Type.Number(),
        }),
        { maxItems: 100 },
      ),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10000, description: 'At most 1000 on create; 10000 for disable_series query results.' })),
    time_range: Type.Optional(Type.Integer({ minimum: 1 })),
    start_time: Type.Optional(Type.Integer({ minimum: 1 })),
    end_time: Type.Optional(Type.Integer({ minimum: 1 })),
    granularity: Type.Optional(Type.Integer({ minimum: 0, description: '0 or absent: automatic; otherwise T/1000…T seconds for a query of duration T.' })),
    calculated_fields: Type.Optional(
      Type.Array(Type.Object({ name: Type.String({ minLength: 1 }), expression: Type.String({ minLength: 1 }) }), { maxItems: 100 }),
    ),
    compare_time_offset_seconds: Type.Optional(enumOf(COMPARE_TIME_OFFSETS)),
  },
  { description: 'A query specification. Unknown fields are ignored and not echoed.' },
);
