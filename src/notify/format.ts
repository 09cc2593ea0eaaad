// What each recipient type receives: the default webhook payload, the data webhook templates
// see, Slack, MS Teams (MessageCard and Workflows Adaptive Card), PagerDuty Events API v2 and
// email bodies. Pure functions of a Notification (plus the recipient's details); no network.
import type { PagerDutySeverity, WebhookDetails } from '../domain/recipients.js';
import type { Notification } from './types.js';

const OPERATORS: Record<string, string> = {
  '>': 'greater than',
  '>=': 'greater than or equal to',
  '<': 'less than',
  '<=': 'less than or equal to',
};

/** `TRIGGERED` or `OK`, as in Honeycomb's webhook payload. */
export const statusWord = (n: Notification) => (n.status === 'triggered' ? 'TRIGGERED' : 'OK');
const title = (n: Notification) => `${n.isTest ? '[TEST] ' : ''}${n.status === 'triggered' ? 'Triggered' : 'Resolved'}: ${n.alert.name}`;

/** The groups whose value meets the threshold (all groups when there is no threshold). */
export function groupsTriggered(n: Notification): { group: Record<string, unknown>; value: number }[] {
  const groups = n.result.groups ?? [];
  const t = n.result.threshold;
  if (!t) return groups;
  const meets = (v: number) => (t.op === '>' ? v > t.value : t.op === '>=' ? v >= t.value : t.op === '<' ? v < t.value : t.op === '<=' ? v <= t.value : true);
  return groups.filter((g) => meets(g.value));
}

/** The burn alert's kind: from `alert.alertType`, else inferred from the SLO figures. */
export function burnAlertKind(n: Notification): 'exhaustion_time' | 'budget_rate' {
  if (n.alert.alertType === 'budget_rate' || n.alert.alertType === 'exhaustion_time') return n.alert.alertType;
  const slo = n.result.slo;
  return slo && slo.burnRate !== undefined && slo.exhaustionMinutes === undefined ? 'budget_rate' : 'exhaustion_time';
}

const hcGroups = (list: { group: Record<string, unknown>; value: number }[]) => list.map((g) => ({ Group: g.group, Result: g.value }));

/**
 * The default webhook payload (no template), modelled on Honeycomb's trigger webhook payload
 * (version, id, name, status, summary, description, operator, threshold, result_groups,
 * result_groups_triggered, trigger_url) with Waggle's additions.
 */
export function defaultWebhookPayload(n: Notification, deliveryId: string): Record<string, unknown> {
  const slo = n.result.slo;
  return {
    version: 'v0.1.0',
    type: n.source,
    ...(n.source === 'burn_alert' ? { alert_type: burnAlertKind(n) } : n.alert.alertType ? { alert_type: n.alert.alertType } : {}),
    id: n.alert.id,
    name: n.alert.name,
    status: statusWord(n),
    summary: title(n),
    description: n.result.summary,
    trigger_description: n.alert.description,
    operator: n.result.threshold ? (OPERATORS[n.result.threshold.op] ?? n.result.threshold.op) : null,
    threshold: n.result.threshold?.value ?? null,
    result_value: n.result.value ?? null,
    result_url: n.result.url ?? '',
    result_groups: hcGroups(n.result.groups ?? []),
    result_groups_triggered: hcGroups(groupsTriggered(n)),
    trigger_url: n.alert.url ?? '',
    environment: n.alert.environmentName ?? null,
    dataset: n.alert.datasetSlug ?? null,
    slo: slo
      ? {
          id: slo.id,
          name: slo.name,
          budget_remaining: slo.budgetRemaining ?? null,
          exhaustion_minutes: slo.exhaustionMinutes ?? null,
          burn_rate: slo.burnRate ?? null,
        }
      : null,
    dedup_key: n.alert.dedupKey,
    notification_id: n.id,
    delivery_id: deliveryId,
    timestamp: n.timestamp,
    is_test: n.isTest ?? false,
  };
}

/** `.Vars` for a webhook template: the recipient's defaults, overridden by the alert's values. */
export function templateVars(details: WebhookDetails, n: Notification): Map<string, string> {
  const vars = new Map<string, string>();
  for (const v of details.webhook_payloads?.template_variables ?? []) vars.set(v.name, v.default_value ?? '');
  for (const v of n.recipient.details?.variables ?? []) if (v.value !== undefined) vars.set(v.name, v.value);
  return vars;
}

/** What a webhook template sees (the names Honeycomb documents, plus `.Alert`, `.SLO`, `.Vars`). */
export function templateData(n: Notification, vars: Map<string, string>, deliveryId: string): Record<string, unknown> {
  const slo = n.result.slo;
  const groups = (list: { group: Record<string, unknown>; value: number }[]) => list.map((g) => ({ Group: g.group, Result: g.value }));
  return {
    Name: n.alert.name,
    ID: n.alert.id,
    Description: n.alert.description,
    URL: n.alert.url ?? '',
    Environment: n.alert.environmentName ?? '',
    Datasets: n.alert.datasetSlug ? [n.alert.datasetSlug] : [],
    Operator: n.result.threshold ? (OPERATORS[n.result.threshold.op] ?? n.result.threshold.op) : '',
    Threshold: n.result.threshold?.value ?? null,
    Result: {
      URL: n.result.url ?? '',
      ImageURL: n.result.imageUrl ?? '',
      Value: n.result.value ?? null,
      Summary: n.result.summary,
      Groups: groups(n.result.groups ?? []),
      GroupsTriggered: groups(groupsTriggered(n)),
    },
    Alert: {
      ID: n.id,
      DeliveryID: deliveryId,
      Name: n.alert.name,
      Description: n.alert.description,
      Status: statusWord(n),
      Summary: title(n),
      Type: n.source,
      AlertType: n.source === 'burn_alert' ? burnAlertKind(n) : (n.alert.alertType ?? ''),
      DedupKey: n.alert.dedupKey,
      URL: n.alert.url ?? '',
      Timestamp: n.timestamp,
      IsTest: n.isTest ?? false,
      Severity: n.recipient.details?.pagerduty_severity ?? '',
    },
    SLO: slo
      ? {
          ID: slo.id,
          Name: slo.name,
          BudgetRemaining: slo.budgetRemaining ?? null,
          ExhaustionMinutes: slo.exhaustionMinutes ?? null,
          BurnRate: slo.burnRate ?? null,
        }
      : null,
    Vars: vars,
  };
}

/** The payload template that applies: trigger (triggers and signals), budget_rate or exhaustion_time. */
export function templateFor(details: WebhookDetails, n: Notification): string | undefined {
  const t = details.webhook_payloads?.payload_templates;
  if (!t) return undefined;
  const body = n.source === 'burn_alert' ? t[burnAlertKind(n)]?.body : t.trigger?.body;
  return body && body.trim() !== '' ? body : undefined;
}

// --- human-readable lines shared by Slack, Teams and email

interface Fact {
  name: string;
  value: string;
}

const fmt = (v: number) => (Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(6))));
const groupText = (g: Record<string, unknown>) =>
  Object.entries(g)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(', ') || '(all)';

export function facts(n: Notification): Fact[] {
  const out: Fact[] = [{ name: 'Status', value: n.status === 'triggered' ? 'Triggered' : 'Resolved' }];
  if (n.result.value !== undefined) out.push({ name: 'Value', value: fmt(n.result.value) });
  if (n.result.threshold) out.push({ name: 'Threshold', value: `${n.result.threshold.op} ${fmt(n.result.threshold.value)}` });
  const slo = n.result.slo;
  if (slo) {
    out.push({ name: 'SLO', value: slo.name });
    if (slo.budgetRemaining !== undefined) out.push({ name: 'Budget remaining', value: `${fmt(slo.budgetRemaining)}%` });
    if (slo.exhaustionMinutes !== undefined) out.push({ name: 'Exhaustion in', value: `${fmt(slo.exhaustionMinutes)} minutes` });
    if (slo.burnRate !== undefined) out.push({ name: 'Burn rate', value: fmt(slo.burnRate) });
  }
  const hit = groupsTriggered(n);
  if (n.result.groups?.length) {
    const shown = (n.status === 'triggered' ? hit : n.result.groups).slice(0, 10);
    if (shown.length) out.push({ name: 'Groups', value: shown.map((g) => `${groupText(g.group)}: ${fmt(g.value)}`).join('\n') });
  }
  if (n.alert.environmentName) out.push({ name: 'Environment', value: n.alert.environmentName });
  if (n.alert.datasetSlug) out.push({ name: 'Dataset', value: n.alert.datasetSlug });
  out.push({ name: 'Time', value: n.timestamp });
  return out;
}

// --- Slack

/** A Slack message (incoming webhooks and chat.postMessage take the same shape). */
export function slackMessage(n: Notification, channel: string): Record<string, unknown> {
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return {
    channel,
    // `text` is mrkdwn: &, < and > must be escaped or Slack reads `<…>` as a link or mention.
    text: esc(`${title(n)} — ${n.result.summary}`),
    attachments: [
      {
        color: n.status === 'triggered' ? 'danger' : 'good',
        title: title(n),
        ...(n.alert.url ? { title_link: n.alert.url } : {}),
        text: [esc([n.result.summary, n.alert.description].filter(Boolean).join('\n')), ...(n.result.url ? [`<${n.result.url}|View the result>`] : [])].join('\n'),
        fields: facts(n).map((f) => ({ title: f.name, value: esc(f.value), short: !f.value.includes('\n') })),
        ...(n.result.imageUrl ? { image_url: n.result.imageUrl } : {}),
        footer: 'Waggle',
        ts: Math.floor(Date.parse(n.timestamp) / 1000) || undefined,
      },
    ],
  };
}

// --- Microsoft Teams

/** Legacy Office 365 connector card (`msteams`). */
export function teamsMessageCard(n: Notification): Record<string, unknown> {
  return {
    '@type': 'MessageCard',
    '@context': 'https://schema.org/extensions',
    summary: title(n),
    themeColor: n.status === 'triggered' ? 'D70000' : '2EB886',
    title: title(n),
    text: [n.result.summary, n.alert.description].filter(Boolean).join('\n\n'),
    sections: [{ facts: facts(n).map((f) => ({ name: f.name, value: f.value })) }],
    ...(n.alert.url || n.result.url
      ? {
          potentialAction: [
            ...(n.alert.url ? [{ '@type': 'OpenUri', name: 'Open', targets: [{ os: 'default', uri: n.alert.url }] }] : []),
            ...(n.result.url ? [{ '@type': 'OpenUri', name: 'Open the result', targets: [{ os: 'default', uri: n.result.url }] }] : []),
          ],
        }
      : {}),
  };
}

/** Adaptive Card in the Workflows (Power Automate) envelope (`msteams_workflow`). */
export function teamsWorkflowMessage(n: Notification): Record<string, unknown> {
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          body: [
            { type: 'TextBlock', text: title(n), weight: 'Bolder', size: 'Medium', wrap: true, color: n.status === 'triggered' ? 'Attention' : 'Good' },
            { type: 'TextBlock', text: n.result.summary, wrap: true },
            ...(n.alert.description ? [{ type: 'TextBlock', text: n.alert.description, wrap: true, isSubtle: true }] : []),
            { type: 'FactSet', facts: facts(n).map((f) => ({ title: f.name, value: f.value })) },
            ...(n.result.imageUrl ? [{ type: 'Image', url: n.result.imageUrl, altText: 'The result’s chart', size: 'Stretch' }] : []),
          ],
          ...(n.alert.url || n.result.url
            ? {
                actions: [
                  ...(n.alert.url ? [{ type: 'Action.OpenUrl', title: 'Open', url: n.alert.url }] : []),
                  ...(n.result.url ? [{ type: 'Action.OpenUrl', title: 'Open the result', url: n.result.url }] : []),
                ],
              }
            : {}),
        },
      },
    ],
  };
}

// --- PagerDuty

/** A PagerDuty Events API v2 event: trigger with a payload, or resolve by dedup_key. */
export function pagerDutyEvent(n: Notification, integrationKey: string): Record<string, unknown> {
  if (n.status === 'resolved') {
    return { routing_key: integrationKey, event_action: 'resolve', dedup_key: n.alert.dedupKey };
  }
  const severity: PagerDutySeverity = n.recipient.details?.pagerduty_severity ?? 'critical';
  const custom: Record<string, unknown> = {
    description: n.alert.description,
    result: n.result.summary,
    alert_id: n.alert.id,
    notification_id: n.id,
  };
  if (n.result.value !== undefined) custom.value = n.result.value;
  if (n.result.threshold) custom.threshold = n.result.threshold;
  if (n.result.groups?.length) custom.groups_triggered = groupsTriggered(n).slice(0, 50);
  if (n.result.slo) custom.slo = n.result.slo;
  if (n.alert.environmentName) custom.environment = n.alert.environmentName;
  if (n.alert.datasetSlug) custom.dataset = n.alert.datasetSlug;
  return {
    routing_key: integrationKey,
    event_action: 'trigger',
    dedup_key: n.alert.dedupKey,
    payload: {
      summary: `${title(n)} — ${n.result.summary}`.slice(0, 1024),
      source: n.alert.datasetSlug ? `waggle/${n.alert.datasetSlug}` : 'waggle',
      severity,
      timestamp: n.timestamp,
      component: n.alert.datasetSlug,
      group: n.alert.environmentName,
      class: n.source,
      custom_details: custom,
    },
    client: 'Waggle',
    ...(n.alert.url ? { client_url: n.alert.url } : {}),
    ...(n.alert.url || n.result.url
      ? { links: [...(n.alert.url ? [{ href: n.alert.url, text: n.alert.name }] : []), ...(n.result.url ? [{ href: n.result.url, text: 'The result' }] : [])] }
      : {}),
    ...(n.result.imageUrl ? { images: [{ src: n.result.imageUrl, ...(n.result.url ? { href: n.result.url } : {}), alt: 'The result’s chart' }] } : {}),
  };
}

// --- email

const html = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export function emailMessage(n: Notification): { subject: string; text: string; html: string } {
  const f = facts(n);
  const subject = `[Waggle] ${title(n)}`.replace(/[\r\n]+/g, ' ');
  const text = [
    title(n),
    '',
    n.result.summary,
    ...(n.alert.description ? ['', n.alert.description] : []),
    '',
    ...f.map((x) => `${x.name}: ${x.value.includes('\n') ? `\n  ${x.value.split('\n').join('\n  ')}` : x.value}`),
    ...(n.alert.url ? ['', n.alert.url] : []),
    ...(n.result.url ? ['', `The result: ${n.result.url}`] : []),
    '',
    '-- ',
    'Sent by Waggle',
  ].join('\n');
  const color = n.status === 'triggered' ? '#d70000' : '#2eb886';
  const body = [
    `<h2 style="color:${color}">${html(title(n))}</h2>`,
    `<p>${html(n.result.summary)}</p>`,
    ...(n.alert.description ? [`<p>${html(n.alert.description)}</p>`] : []),
    '<table cellpadding="4">',
    ...f.map((x) => `<tr><th align="left" valign="top">${html(x.name)}</th><td>${html(x.value).replace(/\n/g, '<br>')}</td></tr>`),
    '</table>',
    ...(n.alert.url ? [`<p><a href="${html(n.alert.url)}">${html(n.alert.url)}</a></p>`] : []),
    ...(n.result.url ? [`<p><a href="${html(n.result.url)}">The result</a></p>`] : []),
    ...(n.result.imageUrl ? [`<p><img src="${html(n.result.imageUrl)}" width="800" height="400" alt="The result’s chart"></p>`] : []),
    '<p style="color:#888">Sent by Waggle</p>',
  ].join('\n');
  return { subject, text, html: `<!doctype html><html><body>${body}</body></html>` };
}

