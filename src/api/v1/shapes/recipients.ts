// The request and answer shapes of /1/recipients (src/api/v1/recipients.ts), for the OpenAPI
// document; the rules of `details` are checked by parseRecipient (src/domain/recipients.ts).
import { Type, type TSchema } from '@sinclair/typebox';
import { LIMITS, RECIPIENT_TYPES, VARIABLE_NAME_PATTERN, type RecipientResponse, type RecipientType } from '../../../domain/recipients.js';

const str = (opts: Record<string, unknown> = {}) => Type.String(opts);
const TypeSchema = Type.Unsafe<RecipientType>({ type: 'string', enum: [...RECIPIENT_TYPES] });
const PayloadTemplateSchema = Type.Object({ body: Type.Optional(str({ description: 'Go template of the request body' })) });
const detailSchemas: Record<RecipientType, TSchema> = {
  pagerduty: Type.Object({
    pagerduty_integration_name: str({ minLength: 1 }),
    pagerduty_integration_key: str({ minLength: 32, maxLength: 32 }),
  }),
  email: Type.Object({ email_address: str({ format: 'email', maxLength: LIMITS.emailAddress }) }),
  slack: Type.Object({ slack_channel: str({ minLength: 1 }) }),
  webhook: Type.Object({
    webhook_name: str({ minLength: 1, maxLength: LIMITS.webhookName }),
    webhook_url: str({ maxLength: LIMITS.webhookUrl, description: 'http or https URL' }),
    webhook_secret: Type.Optional(str({ maxLength: LIMITS.webhookSecret })),
    webhook_headers: Type.Optional(
      Type.Array(
        Type.Object({ header: str({ minLength: 1, maxLength: LIMITS.headerName }), value: Type.Optional(str({ maxLength: LIMITS.headerValue })) }),
        { maxItems: LIMITS.webhookHeaders },
      ),
    ),
    webhook_payloads: Type.Optional(
      Type.Object({
        template_variables: Type.Optional(
          Type.Array(
            Type.Object({
              name: str({ pattern: VARIABLE_NAME_PATTERN.source, maxLength: LIMITS.variableName }),
              default_value: Type.Optional(str({ maxLength: LIMITS.variableDefault })),
            }),
            { maxItems: LIMITS.templateVariables },
          ),
        ),
        payload_templates: Type.Optional(
          Type.Object({
            trigger: Type.Optional(PayloadTemplateSchema),
            budget_rate: Type.Optional(PayloadTemplateSchema),
            exhaustion_time: Type.Optional(PayloadTemplateSchema),
          }),
        ),
      }),
    ),
  }),
  msteams: Type.Object({ webhook_name: str({ minLength: 1, maxLength: LIMITS.webhookName }), webhook_url: str({ maxLength: LIMITS.webhookUrl }) }),
  msteams_workflow: Type.Object({
    webhook_name: str({ minLength: 1, maxLength: LIMITS.webhookName }),
    webhook_url: str({ maxLength: LIMITS.webhookUrl }),
  }),
};

/** The Recipient response schema: one shape per type. */
export const RecipientSchema = Type.Unsafe<RecipientResponse>(
  Type.Union(
    RECIPIENT_TYPES.map((t) =>
      Type.Object({
        id: Type.String(),
        type: Type.Literal(t),
        details: detailSchemas[t],
        created_at: Type.String({ format: 'date-time' }),
        updated_at: Type.String({ format: 'date-time' }),
      }),
    ),
  ),
);

/**
 * The request body as the route validates it: `type` and `details` must be there; the rules of
 * `details` (per type, in the description) are checked by parseRecipient so that each problem
 * is reported under its own field name.
 */
export const RecipientInputSchema = Type.Object({
  type: TypeSchema,
  details: Type.Object({}, {
    additionalProperties: true,
    description:
      'Per type. pagerduty: pagerduty_integration_name*, pagerduty_integration_key* (32 characters). ' +
      'email: email_address*. slack: slack_channel*. webhook: webhook_name* (≤255), webhook_url* (http/https, ≤2048), ' +
      'webhook_secret (≤255), webhook_headers (≤5 of {header* ≤64, value ≤750}), webhook_payloads {template_variables ' +
      '(≤10 of {name* ^[a-z][a-zA-Z0-9]*$ ≤64, default_value ≤256}), payload_templates {trigger, budget_rate, exhaustion_time: {body}}}. ' +
      'msteams, msteams_workflow: webhook_name* (≤255), webhook_url* (≤2048).',
  }),
  id: Type.Optional(Type.String({ description: 'Read-only; ignored.' })),
  created_at: Type.Optional(Type.String({ description: 'Read-only; ignored.' })),
  updated_at: Type.Optional(Type.String({ description: 'Read-only; ignored.' })),
});
