// Recipients (where alerts go; secrets are never shown) and the delivery log: what was sent,
// when, to whom, and how it went.
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { deleteRecipient, listDeliveries, listRecipients } from '../api/endpoints.js';
import type { Delivery, Recipient } from '../api/types.js';
import { RecipientForm, SendTest } from '../components/recipient-form.js';
import { ErrorNotice, Loaded, PageHead, useAsync } from '../components/ui.js';
import { formatTimestamp } from '../format.js';
import type { Scope } from '../routes.js';

/** What a recipient is, without its secrets (webhook secrets and headers, PagerDuty keys). */
export function recipientSummary(r: Recipient): string {
  const d = r.details as Record<string, string | undefined>;
  const host = (u?: string) => {
    try {
      return u ? new URL(u).host : '';
    } catch {
      return '';
    }
  };
  switch (r.type) {
    case 'email':
      return d.email_address ?? '';
    case 'slack':
      return d.slack_channel ?? '';
    case 'pagerduty':
      return d.pagerduty_integration_name ?? '';
    case 'webhook':
      return [d.webhook_name, host(d.webhook_url)].filter(Boolean).join(' · ');
    case 'msteams':
    case 'msteams_workflow':
      return [d.webhook_name, host(d.webhook_url)].filter(Boolean).join(' · ');
    default:
      return '';
  }
}

const stateClass: Record<string, string> = { delivered: 'ok', failed: 'bad', refused: 'bad', retrying: 'warn', queued: '' };

export function RecipientsPage(_: { scope: Scope }) {
  const recipients = useAsync(() => listRecipients(), []);
  const deliveries = useAsync(() => listDeliveries(200), []);
  const [editing, setEditing] = useState<Recipient | 'new' | null>(null);
  const [error, setError] = useState<unknown>(undefined);
  const remove = async (r: Recipient) => {
    if (!confirm(`Delete the ${r.type} recipient ${recipientSummary(r)}?`)) return;
    setError(undefined);
    try {
      await deleteRecipient(r.id);
      recipients.reload();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <div class="stack">
      <PageHead title="Recipients" sub="Where triggers, burn alerts and signals send notifications" />
      <section class="panel flush" aria-labelledby="rcpt-h">
        <div class="row" style={{ padding: '12px 16px' }}>
          <h2 id="rcpt-h">Recipients</h2>
          <span class="spacer" />
          <button class="primary" onClick={() => setEditing('new')} disabled={editing !== null}>New recipient</button>
        </div>
        {error !== undefined && <div style={{ padding: '0 16px 12px' }}><ErrorNotice error={error} title="Not deleted" /></div>}
        {editing !== null && (
          <div style={{ padding: '0 16px 16px' }}>
            <RecipientForm
              key={editing === 'new' ? 'new' : editing.id}
              recipient={editing === 'new' ? undefined : editing}
              onDone={(changed) => {
                setEditing(null);
                if (changed) recipients.reload();
              }}
            />
          </div>
        )}
        <Loaded async={recipients} label="Loading recipients">
          {(list) =>
            list.length === 0 ? (
              <p class="empty">No recipients yet.</p>
            ) : (
              <table data-testid="recipients-table">
                <thead>
                  <tr>
                    <th>Type</th>
                    <th>Sends to</th>
                    <th>Id</th>
                    <th><span class="sr-only">Actions</span></th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((r) => (
                    <tr key={r.id} data-recipient={r.id}>
                      <td>
                        <span class="badge accent">{r.type}</span>
                      </td>
                      <td>{recipientSummary(r)}</td>
                      <td class="mono small muted">{r.id}</td>
                      <td class="nowrap">
                        <SendTest recipient={r} onSent={deliveries.reload} />
                        <button class="ghost" onClick={() => setEditing(r)} disabled={editing !== null}>Edit</button>
                        <button class="ghost" onClick={() => void remove(r)}>Delete</button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )
          }
        </Loaded>
      </section>
      <section class="panel flush" aria-labelledby="dl-h">
        <div class="row" style={{ padding: '12px 16px 0' }}>
          <h2 id="dl-h">Delivery log</h2>
          <span class="spacer" />
          <button class="ghost" onClick={deliveries.reload}>
            Refresh
          </button>
        </div>
        <Loaded async={deliveries} label="Loading deliveries">
          {(list) => (list.length === 0 ? <p class="empty">Nothing has been sent yet.</p> : <DeliveryTable list={list} />)}
        </Loaded>
      </section>
    </div>
  );
}

function DeliveryTable({ list }: { list: Delivery[] }) {
  const [open, setOpen] = useState<string | null>(null);
  return (
    <div class="table-wrap">
      <table data-testid="deliveries-table">
        <thead>
          <tr>
            <th>When</th>
            <th>Alert</th>
            <th>Recipient</th>
            <th>State</th>
            <th class="num">Attempts</th>
            <th>
              <span class="sr-only">Details</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {list.map((d) => (
            <Fragment key={d.id}>
              <tr>
                <td class="nowrap">{formatTimestamp(d.created_at)}</td>
                <td>
                  <strong>{d.alert.name}</strong> <span class={`badge ${d.status === 'triggered' ? 'bad' : 'ok'}`}>{d.status}</span>
                  <div class="small muted">{d.source.replace('_', ' ')}</div>
                </td>
                <td>
                  {d.recipient.type}: {d.recipient.target}
                </td>
                <td>
                  <span class={`badge ${stateClass[d.state] ?? ''}`}>{d.state}</span>
                  {d.error && <div class="small field-error">{d.error}</div>}
                </td>
                <td class="num">{d.attempt_count}</td>
                <td>
                  <button class="icon" aria-expanded={open === d.id} aria-label="Attempts" onClick={() => setOpen(open === d.id ? null : d.id)}>
                    {open === d.id ? '▾' : '▸'}
                  </button>
                </td>
              </tr>
              {open === d.id && (
                <tr>
                  <td colSpan={6}>
                    <ul class="small">
                      {d.attempts.map((a, i) => (
                        <li key={i}>
                          {formatTimestamp(a.at)} · {a.outcome}
                          {a.http_status ? ` · HTTP ${a.http_status}` : ''} · {Math.round(a.duration_ms)} ms{a.error ? ` · ${a.error}` : ''}
                        </li>
                      ))}
                    </ul>
                  </td>
                </tr>
              )}
            </Fragment>
          ))}
        </tbody>
      </table>
    </div>
  );
}
