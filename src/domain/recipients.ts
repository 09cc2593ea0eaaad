// Recipients: team-wide notification targets (PagerDuty, email, Slack, webhook, MS Teams), kept
// in the generic object store (kind `recipient`, environmentId null, scope = team id), and the
// NotificationRecipient references that triggers and burn alerts embed.
//
// What lives here (no HTTP): the per-type rules for `details`, the duplicate rule, the in-use
// check and the read used by delivery code; the NotificationRecipient references are
// ./notification-recipients.ts.
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
import { ApiError, notFound, validationError } from '../errors.js';
import { isObject, Problems } from '../validation.js';
import { UniqueViolation, type ConfigStore, type StoredObject } from '../stores/config/types.js';
import { sha256, shortId } from './ids.js';
import { BURN_ALERT_KIND, RECIPIENT_KIND, SIGNAL_KIND, TRIGGER_KIND } from './kinds.js';
import type { NotificationRecipient } from './notification-recipients.js';

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

/** The Recipient response: `details` as stored, secrets included. */
export type RecipientResponse = { [T in RecipientType]: { id: string; type: T; details: RecipientDetailsByType[T]; created_at: string; updated_at: string } }[RecipientType];

// --- validation

export const length = (s: string) => Array.from(s).length;

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
export function optionalString(p: Problems, obj: Record<string, unknown>, key: string, field: string, max?: number): string | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') return void p.add(field, 'incorrect_type', 'must be a string');
  if (max !== undefined && length(v) > max) return void p.add(field, 'invalid', `must be at most ${max} characters`);
  return v;
}

/** An optional array (null = absent) of at most `max` items, its length checked before any item. */
export function optionalArray(p: Problems, obj: Record<string, unknown>, key: string, field: string, max: number): unknown[] | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  return p.array(field, v, max) ? v : undefined;
}

/** An optional object (null = absent). */
export function optionalObject(p: Problems, obj: Record<string, unknown>, key: string, field: string): Record<string, unknown> | undefined {
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
export function variableName(p: Problems, obj: Record<string, unknown>, field: string): string | undefined {
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
