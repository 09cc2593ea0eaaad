// TypeBox schemas of /1/ resources: they validate requests, type the handlers and make up the
// served OpenAPI document.
import { Type, type TString } from '@sinclair/typebox';

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

/** The path of one board (and of its views). */
export const BoardParams = Type.Object({ boardId: Type.String() });
