// Recipients: team-wide notification targets (PagerDuty, email, Slack, webhook, MS Teams), kept
// in the generic object store (kind `recipient`, environmentId null, scope = team id), and the
// NotificationRecipient references that triggers and burn alerts embed.
//
// What lives here (no HTTP): the per-type rules for `details`, the duplicate rule, the in-use
// check, the read used by delivery code, and the validation of NotificationRecipient arrays.
// src/api/v1/recipients.ts is the HTTP face.
//
// Decisions (see also docs/recipients.md):
// - Duplicates (409): same `type` and same destination. email: the address, case-insensitively;
//   slack: the channel; pagerduty: integration key and integration name; webhook, msteams,
//   msteams_workflow: URL and name. The store enforces it (unique key = SHA-256 of that identity,
//   scope = team), so two concurrent creates cannot both succeed.
// - Secrets are not masked: Honeycomb returns `webhook_secret` and `pagerduty_integration_key`
//   in full on every read (the Terraform provider stores them from reads and its acceptance
//   tests compare them with what was sent), so Waggle does the same.
// - Unknown fields inside `details` (including another type's fields) are ignored and not kept,
//   like unknown fields elsewhere on /1/; an optional field sent as null counts as absent.
// - Legacy `msteams` (Office 365 connector) recipients can no longer be created (422 on `type`,
//   pointing to `msteams_workflow`), as Microsoft retired those connectors; existing ones are
//   still read, updated, delivered to and deleted.
import { Type, type TSchema } from '@sinclair/typebox';
import { ApiError, notFound, validationError, type TypeDetail } from '../errors.js';
import { isObject, Problems } from '../validation.js';
import { UniqueViolation, type ConfigStore, type StoredObject } from '../stores/config/types.js';
import { derivedId, sha256, shortId } from './ids.js';
import { MARKER_MESSAGE_MAX } from './markers.js';
import { BURN_ALERT_KIND, RECIPIENT_KIND, SIGNAL_KIND, TRIGGER_KIND } from './kinds.js';

export const RECIPIENT_TYPES = ['pagerduty', 'email', 'slack', 'webhook', 'msteams', 'msteams_workflow'] as const;
export type RecipientType = (typeof RECIPIENT_TYPES)[number];
export const PAGERDUTY_SEVERITIES = ['critical', 'error', 'warning', 'info'] as const;
export type PagerDutySeverity = (typeof PAGERDUTY_SEVERITIES)[number];

export const LIMITS = {
  pagerdutyKeyLength: 32,
  webhookName: 255,
  webhookUrl: 2048,
  webhookSecret: 255,
  webhookHeaders: 5,
  headerName: 64,
  headerValue: 750,
  templateVariables: 10,
  variableName: 64,
  variableDefault: 256,
  variableValue: 256,
  emailAddress: 254,
} as const;

/** `^[a-z](?:[a-zA-Z0-9]+$)?$` from the contract: a lowercase letter, then letters and digits. */
export const VARIABLE_NAME_PATTERN = /^[a-z](?:[a-zA-Z0-9]+$)?$/;
/** An HTTP header field name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Dot-atom local part, DNS host name with at least two labels (no quoted local parts, no IP literals). */
const EMAIL =
  /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

// --- types

export interface PagerDutyDetails {
  pagerduty_integration_name: string;
  pagerduty_integration_key: string;
}
export interface EmailDetails {
  email_address: string;
}
export interface SlackDetails {
  slack_channel: string;
}
export interface WebhookHeader {
  header: string;
  value?: string;
}
export interface TemplateVariable {
  name: string;
  default_value?: string;
}
export interface PayloadTemplate {
  body?: string;
}
export interface WebhookPayloads {
  template_variables?: TemplateVariable[];
  payload_templates?: { trigger?: PayloadTemplate; budget_rate?: PayloadTemplate; exhaustion_time?: PayloadTemplate };
}
export interface WebhookDetails {
  webhook_name: string;
  webhook_url: string;
  webhook_secret?: string;
  webhook_headers?: WebhookHeader[];
  webhook_payloads?: WebhookPayloads;
}
export interface TeamsDetails {
  webhook_name: string;
  webhook_url: string;
}
export interface RecipientDetailsByType {
  pagerduty: PagerDutyDetails;
  email: EmailDetails;
  slack: SlackDetails;
  webhook: WebhookDetails;
  msteams: TeamsDetails;
  msteams_workflow: TeamsDetails;
}
export type RecipientDetails = RecipientDetailsByType[RecipientType];

/** What the object store holds for a recipient (timestamps come from the object). */
export type StoredRecipient = { [T in RecipientType]: { type: T; details: RecipientDetailsByType[T] } }[RecipientType];

/** A recipient with its full details (secrets included), for delivery code. */
export type Recipient = StoredRecipient & { id: string; teamId: string; createdAt: string; updatedAt: string };

// --- schemas (OpenAPI documentation; the rules themselves are checked by parseRecipient)

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

/** The Recipient response: `details` as stored, secrets included. */
export type RecipientResponse = { [T in RecipientType]: { id: string; type: T; details: RecipientDetailsByType[T]; created_at: string; updated_at: string } }[RecipientType];
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

// --- validation

const length = (s: string) => Array.from(s).length;

/** A required string: missing, wrong type, blank and over-long are problems. Returns it when fine. */
function requiredString(p: Problems, obj: Record<string, unknown>, key: string, field: string, max?: number): string | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return void p.missing(field);
  if (typeof v !== 'string') return void p.add(field, 'incorrect_type', 'must be a string');
  if (v.trim() === '') return void p.missing(field);
  if (max !== undefined && length(v) > max) return void p.add(field, 'invalid', `must be at most ${max} characters`);
  return v;
}

/** An optional string (null = absent). */
function optionalString(p: Problems, obj: Record<string, unknown>, key: string, field: string, max?: number): string | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') return void p.add(field, 'incorrect_type', 'must be a string');
  if (max !== undefined && length(v) > max) return void p.add(field, 'invalid', `must be at most ${max} characters`);
  return v;
}

/** An optional array (null = absent) of at most `max` items, its length checked before any item. */
function optionalArray(p: Problems, obj: Record<string, unknown>, key: string, field: string, max: number): unknown[] | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  return p.array(field, v, max) ? v : undefined;
}

/** An optional object (null = absent). */
function optionalObject(p: Problems, obj: Record<string, unknown>, key: string, field: string): Record<string, unknown> | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) return void p.add(field, 'incorrect_type', 'must be an object');
  return v;
}

/** Why `url` is not an absolute http(s) URL, or undefined when it is one. */
export function httpUrlProblem(url: string): string | undefined {
  const bad = 'must be a valid http or https URL';
  // The authority must follow `//` as written: WHATWG parsing would quietly turn `https:///x`
  // into `https://x/` and a backslash into a slash.
  if (!/^https?:\/\/[^/?#]/i.test(url) || /[\s\u0000-\u001f\u007f\\]/.test(url)) return bad;
  try {
    const u = new URL(url);
    if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.hostname === '') return bad;
  } catch {
    return bad;
  }
  return undefined;
}

export function isEmailAddress(s: string): boolean {
  const at = s.lastIndexOf('@');
  return s.length <= LIMITS.emailAddress && at > 0 && at <= 64 && EMAIL.test(s);
}

function webhookUrl(p: Problems, obj: Record<string, unknown>, field: string): string | undefined {
  const url = requiredString(p, obj, 'webhook_url', field, LIMITS.webhookUrl);
  if (url === undefined) return undefined;
  const problem = httpUrlProblem(url);
  if (problem) return void p.add(field, 'invalid', problem);
  return url;
}

function parseHeaders(p: Problems, list: unknown[], at: string): WebhookHeader[] {
  const out: WebhookHeader[] = [];
  list.forEach((item, i) => {
    const f = `${at}.${i}`;
    if (!isObject(item)) return p.add(f, 'incorrect_type', 'must be an object');
    const header = requiredString(p, item, 'header', `${f}.header`, LIMITS.headerName);
    if (header !== undefined && !HEADER_NAME.test(header)) p.add(`${f}.header`, 'invalid', 'must be a valid HTTP header name');
    const value = optionalString(p, item, 'value', `${f}.value`, LIMITS.headerValue);
    if (value !== undefined && /[\r\n\u0000]/.test(value)) p.add(`${f}.value`, 'invalid', 'must not contain line breaks');
    if (header !== undefined) out.push(value === undefined ? { header } : { header, value });
  });
  return out;
}

/** A template variable name: the contract's pattern, at most 64 characters. Returns it when fine. */
function variableName(p: Problems, obj: Record<string, unknown>, field: string): string | undefined {
  const name = requiredString(p, obj, 'name', field, LIMITS.variableName);
  if (name === undefined) return undefined;
  if (!VARIABLE_NAME_PATTERN.test(name)) {
    return void p.add(field, 'invalid', 'must start with a lowercase letter and contain only letters and digits');
  }
  return name;
}

function parsePayloads(p: Problems, payloads: Record<string, unknown>, at: string): WebhookPayloads {
  const out: WebhookPayloads = {};
  const vars = optionalArray(p, payloads, 'template_variables', `${at}.template_variables`, LIMITS.templateVariables);
  if (vars) {
    const seen = new Set<string>();
    out.template_variables = [];
    vars.forEach((item, i) => {
      const f = `${at}.template_variables.${i}`;
      if (!isObject(item)) return p.add(f, 'incorrect_type', 'must be an object');
      const name = variableName(p, item, `${f}.name`);
      const def = optionalString(p, item, 'default_value', `${f}.default_value`, LIMITS.variableDefault);
      if (name === undefined) return;
      if (seen.has(name)) return p.add(`${f}.name`, 'invalid', `duplicates the variable ${JSON.stringify(name)}`);
      seen.add(name);
      out.template_variables!.push(def === undefined ? { name } : { name, default_value: def });
    });
  }
  const templates = optionalObject(p, payloads, 'payload_templates', `${at}.payload_templates`);
  if (templates) {
    out.payload_templates = {};
    for (const kind of ['trigger', 'budget_rate', 'exhaustion_time'] as const) {
      const t = optionalObject(p, templates, kind, `${at}.payload_templates.${kind}`);
      if (!t) continue;
      const body = optionalString(p, t, 'body', `${at}.payload_templates.${kind}.body`);
      out.payload_templates[kind] = body === undefined ? {} : { body };
    }
  }
  return out;
}

/**
 * Validates a recipient's `type` and `details` and returns them normalised (known fields only).
 * Every problem is a 422 naming its field (`type`, `details.pagerduty_integration_key`,
 * `details.webhook_headers.0.header`, …); all of them are reported at once.
 */
export function parseRecipient(input: { type?: unknown; details?: unknown }): StoredRecipient {
  const p = new Problems();
  const type = input.type;
  if (type === undefined || type === null) p.missing('type');
  else if (typeof type !== 'string') p.add('type', 'incorrect_type', 'must be a string');
  else if (!(RECIPIENT_TYPES as readonly string[]).includes(type)) p.add('type', 'invalid', `must be one of ${RECIPIENT_TYPES.join(', ')}`);
  const d = input.details;
  if (d === undefined || d === null) p.missing('details');
  else if (!isObject(d)) p.add('details', 'incorrect_type', 'must be an object');
  p.throwIfAny();
  const details = d as Record<string, unknown>;

  let result: StoredRecipient;
  switch (type as RecipientType) {
    case 'pagerduty': {
      const name = requiredString(p, details, 'pagerduty_integration_name', 'details.pagerduty_integration_name');
      const key = requiredString(p, details, 'pagerduty_integration_key', 'details.pagerduty_integration_key');
      if (key !== undefined && length(key) !== LIMITS.pagerdutyKeyLength) {
        p.add('details.pagerduty_integration_key', 'invalid', `must be exactly ${LIMITS.pagerdutyKeyLength} characters`);
      }
      result = { type: 'pagerduty', details: { pagerduty_integration_name: name!, pagerduty_integration_key: key! } };
      break;
    }
    case 'email': {
      const address = requiredString(p, details, 'email_address', 'details.email_address');
      if (address !== undefined && !isEmailAddress(address)) p.add('details.email_address', 'invalid', 'must be a valid email address');
      result = { type: 'email', details: { email_address: address! } };
      break;
    }
    case 'slack': {
      const channel = requiredString(p, details, 'slack_channel', 'details.slack_channel');
      result = { type: 'slack', details: { slack_channel: channel! } };
      break;
    }
    case 'webhook': {
      const w: WebhookDetails = {
        webhook_name: requiredString(p, details, 'webhook_name', 'details.webhook_name', LIMITS.webhookName)!,
        webhook_url: webhookUrl(p, details, 'details.webhook_url')!,
      };
      const secret = optionalString(p, details, 'webhook_secret', 'details.webhook_secret', LIMITS.webhookSecret);
      if (secret !== undefined) w.webhook_secret = secret;
      const headers = optionalArray(p, details, 'webhook_headers', 'details.webhook_headers', LIMITS.webhookHeaders);
      if (headers) w.webhook_headers = parseHeaders(p, headers, 'details.webhook_headers');
      const payloads = optionalObject(p, details, 'webhook_payloads', 'details.webhook_payloads');
      if (payloads) w.webhook_payloads = parsePayloads(p, payloads, 'details.webhook_payloads');
      result = { type: 'webhook', details: w };
      break;
    }
    case 'msteams':
    case 'msteams_workflow': {
      const t: TeamsDetails = {
        webhook_name: requiredString(p, details, 'webhook_name', 'details.webhook_name', LIMITS.webhookName)!,
        webhook_url: webhookUrl(p, details, 'details.webhook_url')!,
      };
      result = { type: type as 'msteams' | 'msteams_workflow', details: t };
      break;
    }
  }
  p.throwIfAny();
  return result!;
}

/**
 * The deprecated NotificationRecipient `target` of a recipient: the Slack channel, the email
 * address, the webhook name (webhook, msteams, msteams_workflow) or the PagerDuty integration name.
 */
export function recipientTarget(r: StoredRecipient): string {
  switch (r.type) {
    case 'pagerduty':
      return r.details.pagerduty_integration_name;
    case 'email':
      return r.details.email_address;
    case 'slack':
      return r.details.slack_channel;
    default:
      return r.details.webhook_name;
  }
}

/** What makes two recipients duplicates (see the header); stored hashed as the object's unique key. */
export function recipientIdentity(r: StoredRecipient): string {
  switch (r.type) {
    case 'pagerduty':
      return JSON.stringify([r.type, r.details.pagerduty_integration_key, r.details.pagerduty_integration_name]);
    case 'email':
      return JSON.stringify([r.type, r.details.email_address.toLowerCase()]);
    case 'slack':
      return JSON.stringify([r.type, r.details.slack_channel]);
    default:
      return JSON.stringify([r.type, r.details.webhook_url, r.details.webhook_name]);
  }
}
const uniqueKeyOf = (r: StoredRecipient) => sha256(recipientIdentity(r));

function duplicate(r: StoredRecipient): ApiError {
  const what: Record<RecipientType, string> = {
    pagerduty: 'integration key and name',
    email: 'email address',
    slack: 'channel',
    webhook: 'URL and name',
    msteams: 'URL and name',
    msteams_workflow: 'URL and name',
  };
  return new ApiError(409, 'A recipient with that target already exists.', {
    detail: `the team already has ${r.type === 'email' ? 'an' : 'a'} ${r.type} recipient with this ${what[r.type]}`,
  });
}

// --- store operations

export function recipientResponse(o: StoredObject<StoredRecipient>): RecipientResponse {
  return { id: o.id, type: o.body.type, details: o.body.details, created_at: o.createdAt, updated_at: o.updatedAt } as RecipientResponse;
}

export function listRecipients(store: ConfigStore, teamId: string): Promise<StoredObject<StoredRecipient>[]> {
  return store.listObjects<StoredRecipient>(RECIPIENT_KIND, { teamId });
}

/** The team's recipient `id`; 404 when it does not exist or belongs to another team. */
export async function getRecipient(store: ConfigStore, teamId: string, id: string): Promise<StoredObject<StoredRecipient>> {
  const o = await store.getObject<StoredRecipient>(RECIPIENT_KIND, id);
  if (!o || o.teamId !== teamId) throw notFound('recipient');
  return o;
}

/**
 * The recipient with its full details, secrets included, for delivery code; undefined when it
 * does not exist (any more) or belongs to another team.
 */
export async function getRecipientForDelivery(store: ConfigStore, teamId: string, id: string): Promise<Recipient | undefined> {
  const o = await store.getObject<StoredRecipient>(RECIPIENT_KIND, id);
  if (!o || o.teamId !== teamId) return undefined;
  return { id: o.id, teamId: o.teamId, type: o.body.type, details: o.body.details, createdAt: o.createdAt, updatedAt: o.updatedAt } as Recipient;
}

/** Validates and creates a team-wide recipient: 422 on invalid input, 409 on a duplicate. */
export async function createRecipient(
  store: ConfigStore,
  teamId: string,
  input: { type?: unknown; details?: unknown },
): Promise<StoredObject<StoredRecipient>> {
  if (input.type === 'msteams') {
    throw validationError([
      {
        field: 'type',
        code: 'invalid',
        description: 'msteams recipients (Office 365 connectors) can no longer be created; use msteams_workflow (a Teams Workflows webhook URL)',
      },
    ]);
  }
  const r = parseRecipient(input);
  try {
    return await store.createObject<StoredRecipient>({
      id: shortId(),
      kind: RECIPIENT_KIND,
      teamId,
      environmentId: null,
      datasetId: null,
      scope: teamId,
      uniqueKey: uniqueKeyOf(r),
      body: r,
    });
  } catch (err) {
    if (err instanceof UniqueViolation) throw duplicate(r);
    throw err;
  }
}

/** Full replacement of `details`; `type` cannot change (422); 409 when it would duplicate another. */
export async function updateRecipient(
  store: ConfigStore,
  teamId: string,
  id: string,
  input: { type?: unknown; details?: unknown },
): Promise<StoredObject<StoredRecipient>> {
  const current = await getRecipient(store, teamId, id);
  if (typeof input.type === 'string' && (RECIPIENT_TYPES as readonly string[]).includes(input.type) && input.type !== current.body.type) {
    throw validationError([{ field: 'type', code: 'invalid', description: `cannot be changed (the recipient is ${current.body.type})` }]);
  }
  const r = parseRecipient(input);
  try {
    const updated = await store.updateObject<StoredRecipient>(RECIPIENT_KIND, id, { body: r, uniqueKey: uniqueKeyOf(r) });
    if (!updated) throw notFound('recipient');
    return updated;
  } catch (err) {
    if (err instanceof UniqueViolation) throw duplicate(r);
    throw err;
  }
}

const usesRecipient = (id: string) => (o: StoredObject<unknown>) => {
  const list = (o.body as { recipients?: unknown } | null)?.recipients;
  return Array.isArray(list) && list.some((r) => isObject(r) && r.id === id);
};

/** The team's triggers (every environment) whose `recipients` name the recipient. */
export async function triggersUsingRecipient(store: ConfigStore, teamId: string, recipientId: string): Promise<StoredObject<unknown>[]> {
  return (await store.listObjects<unknown>(TRIGGER_KIND, { teamId })).filter(usesRecipient(recipientId));
}

/** The team's triggers, burn alerts and signals whose `recipients` name the recipient. */
export async function recipientUsage(
  store: ConfigStore,
  teamId: string,
  recipientId: string,
): Promise<{ triggers: StoredObject<unknown>[]; burnAlerts: StoredObject<unknown>[]; signals: StoredObject<unknown>[] }> {
  const using = (kind: string) => store.listObjects<unknown>(kind, { teamId }).then((l) => l.filter(usesRecipient(recipientId)));
  const [triggers, burnAlerts, signals] = await Promise.all([triggersUsingRecipient(store, teamId, recipientId), using(BURN_ALERT_KIND), using(SIGNAL_KIND)]);
  return { triggers, burnAlerts, signals };
}

/** 409 while a trigger, burn alert or signal of the team uses the recipient. */
export async function assertRecipientNotInUse(store: ConfigStore, teamId: string, recipientId: string): Promise<void> {
  const { triggers, burnAlerts, signals } = await recipientUsage(store, teamId, recipientId);
  const count = (n: number, what: string) => (n ? `${n} ${what}${n > 1 ? 's' : ''}` : '');
  const parts = [count(triggers.length, 'trigger'), count(burnAlerts.length, 'burn alert'), count(signals.length, 'signal')].filter(Boolean);
  if (parts.length) {
    throw new ApiError(409, 'Recipient is in use by triggers, burn alerts or signals and cannot be deleted.', {
      detail: `the recipient is used by ${parts.join(' and ')}; remove it from them first`,
    });
  }
}

/** Deletes the team's recipient: 404 if unknown, 409 while in use. */
export async function deleteRecipient(store: ConfigStore, teamId: string, id: string): Promise<void> {
  await getRecipient(store, teamId, id);
  await assertRecipientNotInUse(store, teamId, id);
  if (!(await store.deleteObject(RECIPIENT_KIND, id))) throw notFound('recipient');
}

// --- NotificationRecipient (inside triggers, burn alerts and signals)

/** Most recipients one trigger, burn alert or signal may name. */
export const MAX_NOTIFICATION_RECIPIENTS = 100;
/** The trigger-only recipient type: a marker with the recipient's `target` as its message. */
export const MARKER_RECIPIENT = 'marker';
export type NotificationRecipientType = RecipientType | typeof MARKER_RECIPIENT;

export interface NotificationVariable {
  name: string;
  value?: string;
}
export interface NotificationRecipientDetails {
  pagerduty_severity?: PagerDutySeverity;
  variables?: NotificationVariable[];
}
/** The normalised form triggers and burn alerts store and answer with. */
export interface NotificationRecipient {
  /** A team recipient's id; for a marker recipient, derived from its text (markerRecipientId). */
  id: string;
  /** Deprecated, filled from the recipient. */
  type: NotificationRecipientType;
  /** Deprecated, filled from the recipient (see recipientTarget); a marker recipient's text. */
  target: string;
  details?: NotificationRecipientDetails;
}

export const NotificationRecipientSchema = Type.Object({
  id: Type.Optional(Type.String({ description: 'Always in answers. On input optional for an email recipient given by address (`type` email, `target` the address) and a marker recipient (triggers).' })),
  type: Type.Optional(Type.Unsafe<NotificationRecipientType>({ type: 'string', enum: [...RECIPIENT_TYPES, MARKER_RECIPIENT] })),
  target: Type.Optional(Type.String()),
  details: Type.Optional(
    Type.Object({
      pagerduty_severity: Type.Optional(Type.Unsafe<PagerDutySeverity>({ type: 'string', enum: [...PAGERDUTY_SEVERITIES], default: 'critical' })),
      variables: Type.Optional(
        Type.Array(
          Type.Object({
            name: Type.String({ pattern: VARIABLE_NAME_PATTERN.source, maxLength: LIMITS.variableName }),
            value: Type.Optional(Type.String({ maxLength: LIMITS.variableValue })),
          }),
          { maxItems: LIMITS.templateVariables },
        ),
      ),
    }),
  ),
});

const sameTarget = (r: StoredRecipient, target: string) =>
  r.type === 'email' ? recipientTarget(r).toLowerCase() === target.toLowerCase() : recipientTarget(r) === target;

/** A recipient delivery can send to (every type but marker). */
export type DeliverableRecipient = NotificationRecipient & { type: RecipientType };
export const isDeliverable = (r: NotificationRecipient): r is DeliverableRecipient => r.type !== MARKER_RECIPIENT;

/** The id of a marker recipient: derived from its text, so a GET → PUT round trip keeps it. */
export const markerRecipientId = (text: string) => derivedId(`marker recipient\u0000${text}`);

export interface NotificationRecipientOptions {
  /** Field name problems start with (default `recipients`). */
  field?: string;
  minItems?: number;
  /** Default MAX_NOTIFICATION_RECIPIENTS; checked before any item is. */
  maxItems?: number;
  /** Triggers: `{type: "marker", target: "<text>"}` entries are allowed. */
  allowMarker?: boolean;
  /** What the resource holds now (PUT): a marker recipient may then be named by its id alone. */
  current?: readonly NotificationRecipient[];
}

/**
 * Validates the `recipients` of a trigger, burn alert or signal against the team's recipients and
 * returns them normalised: `type` and `target` filled from the recipient, and for PagerDuty
 * recipients `details.pagerduty_severity` (default `critical`). Nothing is created here: an
 * email address that is not yet a recipient comes back with `id` "" for saveNotificationRecipients
 * to create once the whole body is valid.
 *
 * Each entry names a recipient of the team by `id`. Without an `id` (the deprecated form) the
 * entry's `type` and `target` must match exactly one recipient of the team, except that
 * `{type: "email", target: "<address>"}` names the team's email recipient of that address
 * (case-insensitively) or a new one, and (triggers, `allowMarker`) `{type: "marker", target:
 * "<text>"}` is a marker recipient (no recipient object; the trigger makes a marker with the text
 * when it fires). A `type` of "" counts as absent (the Terraform provider sends it so); a `type`
 * or `target` that disagrees with the recipient is a 422. `details.pagerduty_severity` only on
 * PagerDuty recipients; `details.variables` only on webhook recipients, each naming one of its
 * template variables, at most once. The same recipient twice is a 422. At most `maxItems`
 * entries, checked before any entry is read. Field names in errors start with `field` (default
 * `recipients`), e.g. `recipients.0.id`.
 */
export async function validateNotificationRecipients(
  store: ConfigStore,
  teamId: string,
  input: unknown,
  opts: NotificationRecipientOptions = {},
): Promise<NotificationRecipient[]> {
  const at = opts.field ?? 'recipients';
  const p = new Problems();
  if (input === undefined || input === null) input = [];
  if (!p.array(at, input, opts.maxItems ?? MAX_NOTIFICATION_RECIPIENTS)) p.throwIfAny();
  const list = input as unknown[];
  if (opts.minItems !== undefined && list.length < opts.minItems) {
    p.add(at, list.length ? 'invalid' : 'missing', `must have at least ${opts.minItems} item${opts.minItems > 1 ? 's' : ''}`);
  }
  const team = list.length ? await listRecipients(store, teamId) : [];
  const byId = new Map(team.map((o) => [o.id, o]));
  const types: readonly string[] = opts.allowMarker ? [...RECIPIENT_TYPES, MARKER_RECIPIENT] : RECIPIENT_TYPES;
  const out: NotificationRecipient[] = [];
  const seen = new Set<string>();

  list.forEach((item, i) => {
    const f = `${at}.${i}`;
    if (!isObject(item)) return p.add(f, 'incorrect_type', 'must be an object');
    const id = optionalString(p, item, 'id', `${f}.id`) || undefined;
    let type = optionalString(p, item, 'type', `${f}.type`);
    if (type === '') type = undefined;
    if (type !== undefined && !types.includes(type)) return p.add(`${f}.type`, 'invalid', `must be one of ${types.join(', ')}`);
    let target = optionalString(p, item, 'target', `${f}.target`);
    if (target === '') target = undefined;

    let entry: NotificationRecipient;
    let recipient: StoredRecipient | undefined;
    const currentMarker = id === undefined ? undefined : opts.current?.find((r) => r.id === id && r.type === MARKER_RECIPIENT);
    if (type === MARKER_RECIPIENT || (type === undefined && target === undefined && currentMarker && !byId.has(id!))) {
      // A marker recipient is its text: a stale id sent with a new text follows the text.
      const text = target ?? currentMarker?.target;
      if (text === undefined) return p.add(`${f}.target`, 'missing', 'is the text of the marker and is required');
      if (length(text) > MARKER_MESSAGE_MAX) return p.add(`${f}.target`, 'invalid', `must be at most ${MARKER_MESSAGE_MAX} characters`);
      entry = { id: markerRecipientId(text), type: MARKER_RECIPIENT, target: text };
    } else if (id !== undefined) {
      const o = byId.get(id);
      if (!o) return p.add(`${f}.id`, 'invalid', 'is not a recipient of this team');
      if (type !== undefined && type !== o.body.type) return p.add(`${f}.type`, 'invalid', `does not match the recipient (${o.body.type})`);
      if (target !== undefined && !sameTarget(o.body, target)) return p.add(`${f}.target`, 'invalid', 'does not match the recipient');
      recipient = o.body;
      entry = { id: o.id, type: o.body.type, target: recipientTarget(o.body) };
    } else if (type !== undefined && target !== undefined) {
      const matches = team.filter((o) => o.body.type === type && sameTarget(o.body, target!));
      if (matches.length === 1) {
        recipient = matches[0].body;
        entry = { id: matches[0].id, type: recipient.type, target: recipientTarget(recipient) };
      } else if (matches.length === 0 && type === 'email') {
        // A new email recipient, made by saveNotificationRecipients.
        if (!isEmailAddress(target)) return p.add(`${f}.target`, 'invalid', 'must be a valid email address');
        entry = { id: '', type: 'email', target };
      } else {
        return p.add(`${f}.target`, 'invalid', matches.length ? 'matches more than one recipient; use id' : `no ${type} recipient of this team has this target`);
      }
    } else {
      return p.missing(`${f}.id`);
    }
    const key = entry.id || `email\u0000${entry.target.toLowerCase()}`;
    if (seen.has(key)) return p.add(`${f}.id`, 'invalid', 'names a recipient already in the list');
    seen.add(key);

    const details = optionalObject(p, item, 'details', `${f}.details`) ?? {};
    const severity = details.pagerduty_severity;
    if (severity !== undefined && severity !== null) {
      if (entry.type !== 'pagerduty') p.add(`${f}.details.pagerduty_severity`, 'invalid', 'is only for pagerduty recipients');
      else if (typeof severity !== 'string') p.add(`${f}.details.pagerduty_severity`, 'incorrect_type', 'must be a string');
      else if (!(PAGERDUTY_SEVERITIES as readonly string[]).includes(severity)) {
        p.add(`${f}.details.pagerduty_severity`, 'invalid', `must be one of ${PAGERDUTY_SEVERITIES.join(', ')}`);
      }
    }
    if (entry.type === 'pagerduty') {
      entry.details = { pagerduty_severity: typeof severity === 'string' ? (severity as PagerDutySeverity) : 'critical' };
    }
    const vars = optionalArray(p, details, 'variables', `${f}.details.variables`, LIMITS.templateVariables);
    if (vars) {
      if (recipient?.type !== 'webhook') {
        p.add(`${f}.details.variables`, 'invalid', 'are only for webhook recipients');
      } else {
        const defined = new Set((recipient.details.webhook_payloads?.template_variables ?? []).map((v) => v.name));
        const names = new Set<string>();
        const variables: NotificationVariable[] = [];
        vars.forEach((v, j) => {
          const vf = `${f}.details.variables.${j}`;
          if (!isObject(v)) return p.add(vf, 'incorrect_type', 'must be an object');
          const name = variableName(p, v, `${vf}.name`);
          const value = optionalString(p, v, 'value', `${vf}.value`, LIMITS.variableValue);
          if (name === undefined) return;
          if (!defined.has(name)) return p.add(`${vf}.name`, 'invalid', 'is not a template variable of the recipient');
          if (names.has(name)) return p.add(`${vf}.name`, 'invalid', `duplicates the variable ${JSON.stringify(name)}`);
          names.add(name);
          variables.push(value === undefined ? { name } : { name, value });
        });
        entry.details = { variables };
      }
    }
    out.push(entry);
  });
  p.throwIfAny();
  return out;
}

/**
 * Makes the email recipients that validateNotificationRecipients left without an id (an address
 * no recipient of the team had), or finds the one a concurrent request made meanwhile, and
 * returns the list with every id filled. Called once the whole body is valid, right before it
 * is stored.
 */
export async function saveNotificationRecipients(store: ConfigStore, teamId: string, list: NotificationRecipient[]): Promise<NotificationRecipient[]> {
  const out: NotificationRecipient[] = [];
  for (const entry of list) {
    if (entry.id !== '' || entry.type !== 'email') {
      out.push(entry);
      continue;
    }
    const body: StoredRecipient = { type: 'email', details: { email_address: entry.target } };
    let o: StoredObject<StoredRecipient> | undefined;
    try {
      o = await createRecipient(store, teamId, body);
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 409)) throw err;
      o = (await listRecipients(store, teamId)).find((r) => r.body.type === 'email' && sameTarget(r.body, entry.target));
      if (!o) throw err;
    }
    out.push({ id: o.id, type: 'email', target: recipientTarget(o.body) });
  }
  return out;
}

/**
 * Stored NotificationRecipients with `type` and `target` refreshed from the team's recipients as
 * they are now (a recipient's target can change after the trigger was saved). Entries whose
 * recipient no longer exists are returned unchanged.
 */
export async function refreshNotificationRecipients(
  store: ConfigStore,
  teamId: string,
  list: NotificationRecipient[],
): Promise<NotificationRecipient[]> {
  if (!list.length) return list;
  const byId = new Map((await listRecipients(store, teamId)).map((o) => [o.id, o.body]));
  return list.map((n) => {
    const r = byId.get(n.id);
    return r ? { ...n, type: r.type, target: recipientTarget(r) } : n;
  });
}
