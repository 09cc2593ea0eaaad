// Creating and editing a recipient of any type, and sending one a test notification. The
// fields per type are the API's `details` (docs/recipients.md); a webhook's headers and payload
// templates, which this form does not edit, are kept as they are on an edit (PUT replaces
// `details` whole). Problems the API reports are shown next to their field.
import { useState } from 'preact/hooks';
import { ApiError } from '../api/client.js';
import { createRecipient, listDeliveries, testRecipient, updateRecipient } from '../api/endpoints.js';
import type { Delivery, Recipient } from '../api/types.js';
import { ErrorNotice } from './ui.js';

interface FieldDef {
  key: string;
  label: string;
  secret?: boolean;
  optional?: boolean;
  placeholder?: string;
}
const WEBHOOK_LIKE: FieldDef[] = [
  { key: 'webhook_name', label: 'Name' },
  { key: 'webhook_url', label: 'URL', placeholder: 'https://…' },
];
export const RECIPIENT_FIELDS: Record<string, FieldDef[]> = {
  email: [{ key: 'email_address', label: 'Email address', placeholder: 'oncall@example.com' }],
  slack: [{ key: 'slack_channel', label: 'Slack channel', placeholder: '#alerts' }],
  pagerduty: [
    { key: 'pagerduty_integration_name', label: 'Integration name' },
    { key: 'pagerduty_integration_key', label: 'Integration key (32 characters)', secret: true },
  ],
  webhook: [...WEBHOOK_LIKE, { key: 'webhook_secret', label: 'Secret (signs each request)', secret: true, optional: true }],
  msteams: WEBHOOK_LIKE,
  msteams_workflow: WEBHOOK_LIKE,
};
const TYPE_LABELS: Record<string, string> = {
  email: 'Email', slack: 'Slack', pagerduty: 'PagerDuty', webhook: 'Webhook', msteams: 'Microsoft Teams (connector)', msteams_workflow: 'Microsoft Teams (workflow)',
};

export function RecipientForm({ recipient, onDone }: { recipient?: Recipient; onDone: (changed: boolean) => void }) {
  const [type, setType] = useState(recipient?.type ?? 'email');
  const [values, setValues] = useState<Record<string, string>>(() =>
    Object.fromEntries(Object.entries(recipient?.details ?? {}).filter(([, v]) => typeof v === 'string')) as Record<string, string>,
  );
  const [state, setState] = useState<{ busy?: boolean; error?: unknown }>({});
  const fields = RECIPIENT_FIELDS[type] ?? [];
  const problemOf = (key: string) =>
    state.error instanceof ApiError ? state.error.fields.find((f) => f.field === `details.${key}` || f.field === key)?.description : undefined;
  const save = async (e: Event) => {
    e.preventDefault();
    setState({ busy: true });
    // Kept from the stored details: what this form does not edit (a webhook's headers, templates).
    const details: Record<string, unknown> = { ...(recipient?.details ?? {}) };
    for (const f of fields) {
      const v = (values[f.key] ?? '').trim();
      if (v === '' && f.optional) delete details[f.key];
      else details[f.key] = v;
    }
    try {
      if (recipient) await updateRecipient(recipient.id, { type, details });
      else await createRecipient({ type, details });
      onDone(true);
    } catch (error) {
      setState({ error });
    }
  };
  const unplaced = state.error instanceof ApiError ? state.error.fields.filter((p) => !fields.some((f) => p.field === `details.${f.key}` || p.field === f.key)) : [];
  return (
    <form class="settings-form recipient-form" onSubmit={save} aria-label={recipient ? 'Edit recipient' : 'New recipient'}>
      <label class="field">
        Type
        <select name="type" value={type} disabled={recipient !== undefined} onChange={(e) => setType((e.target as HTMLSelectElement).value)}>
          {Object.keys(RECIPIENT_FIELDS).map((t) => <option key={t} value={t}>{TYPE_LABELS[t]}</option>)}
        </select>
      </label>
      {fields.map((f) => {
        const problem = problemOf(f.key);
        return (
          <label class="field" key={`${type}.${f.key}`}>
            {f.label}{f.optional ? ' (optional)' : ''}
            <input
              name={f.key}
              type={f.secret ? 'password' : 'text'}
              autoComplete="off"
              required={!f.optional}
              placeholder={f.placeholder}
              value={values[f.key] ?? ''}
              aria-invalid={problem ? 'true' : undefined}
              onInput={(e) => setValues({ ...values, [f.key]: (e.target as HTMLInputElement).value })}
            />
            {problem && <span class="field-error" role="alert">{problem}</span>}
          </label>
        );
      })}
      <div class="row">
        <button class="primary" type="submit" disabled={state.busy}>{state.busy ? 'Saving…' : recipient ? 'Save' : 'Create'}</button>
        <button type="button" class="ghost" onClick={() => onDone(false)}>Cancel</button>
      </div>
      {state.error !== undefined && (!(state.error instanceof ApiError) || state.error.fields.length === 0 || unplaced.length > 0) && (
        <ErrorNotice error={unplaced.length > 0 ? new ApiError(422, '', unplaced) : state.error} title="Not saved" />
      )}
    </form>
  );
}

/** "Send test": queues a test notification, then follows its delivery until it is done. */
export function SendTest({ recipient, onSent }: { recipient: Recipient; onSent: () => void }) {
  const [state, setState] = useState<{ busy?: boolean; delivery?: Delivery; error?: unknown }>({});
  const send = async () => {
    setState({ busy: true });
    try {
      const { alert_id } = await testRecipient(recipient.id);
      for (let i = 0; i < 60; i++) {
        const [d] = await listDeliveries(1, alert_id);
        if (d && d.state !== 'queued' && d.state !== 'retrying') {
          setState({ delivery: d });
          onSent();
          return;
        }
        if (d) setState({ busy: true, delivery: d });
        await new Promise((r) => setTimeout(r, 500));
      }
      setState({ error: new Error('still being delivered: see the delivery log') });
      onSent();
    } catch (error) {
      setState({ error });
    }
  };
  const d = state.delivery;
  return (
    <span class="send-test">
      <button class="ghost" onClick={() => void send()} disabled={state.busy}>{state.busy ? 'Sending…' : 'Send test'}</button>
      {d && !state.busy && (
        <span class={`badge ${d.state === 'delivered' ? 'ok' : 'bad'}`} role="status" title={d.error ?? ''}>
          {d.state === 'delivered' ? 'test delivered' : `test ${d.state}${d.error ? `: ${d.error}` : ''}`}
        </span>
      )}
      {state.error !== undefined && <span class="field-error" role="alert">{(state.error as Error).message}</span>}
    </span>
  );
}
