// NotificationRecipients: the references to recipients that triggers, burn alerts and signals
// embed (`{id, type, target, details}`), and `marker` recipients of triggers. Checking a list of
// them (validateNotificationRecipients: an inline email names or makes the team's recipient of
// that address), making the new ones, and reading them back as the recipients are now.
// The recipients themselves are ./recipients.ts.
import { Type } from '@sinclair/typebox';
import { ApiError } from '../errors.js';
import { isObject, Problems } from '../validation.js';
import { type ConfigStore, type StoredObject } from '../stores/config/types.js';
import { derivedId } from './ids.js';
import { MARKER_MESSAGE_MAX } from './markers.js';
import { RECIPIENT_TYPES, type RecipientType, PAGERDUTY_SEVERITIES, type PagerDutySeverity, LIMITS, VARIABLE_NAME_PATTERN, type StoredRecipient, isEmailAddress, recipientTarget, listRecipients, createRecipient, length, optionalString, optionalArray, optionalObject, variableName } from './recipients.js';

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
  // "" is as if omitted: the Terraform provider sends it with a recipient given by id.
  type: Type.Optional(Type.Unsafe<NotificationRecipientType | ''>({ type: 'string', enum: [...RECIPIENT_TYPES, MARKER_RECIPIENT, ''], description: '"" is as if omitted.' })),
  target: Type.Optional(Type.String()),
  details: Type.Optional(
    Type.Object({
      // No `default`: ajv (useDefaults) would write it into every recipient's details, and a
      // severity is refused on recipients that are not PagerDuty's. validateNotificationRecipients defaults it.
      // A string: which values (and that only PagerDuty recipients take one) validateNotificationRecipients
      // says with the recipient's type, so a bad severity is reported with the body's other recipient problems.
      pagerduty_severity: Type.Optional(Type.String({ description: `PagerDuty recipients only: ${PAGERDUTY_SEVERITIES.join(', ')}; \`critical\` when omitted.` })),
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
