// One delivery attempt per recipient type, over the network: webhook, Slack, MS Teams and
// PagerDuty over HTTP(S) (global fetch, redirects not followed, a timeout per request), email
// over SMTP (nodemailer). Each returns an AttemptResult; none throws for delivery problems.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import nodemailer from 'nodemailer';
import type { Recipient } from '../domain/recipients.js';
import {
  defaultWebhookPayload,
  emailMessage,
  pagerDutyEvent,
  slackMessage,
  teamsMessageCard,
  teamsWorkflowMessage,
  templateData,
  templateFor,
  templateVars,
} from './format.js';
import { looksLikeJson, renderTemplate, TemplateError } from './template.js';
import type { Notification } from './types.js';

export interface AttemptResult {
  ok: boolean;
  /** Worth another attempt: a network error, a timeout, 5xx, 429 or 408, an SMTP 4xx. */
  retryable: boolean;
  httpStatus?: number;
  error?: string;
  /** From a Retry-After header (429, 503). */
  retryAfterMs?: number;
  /** Cut short because delivery is shutting down: not counted as an attempt. */
  interrupted?: boolean;
}

export interface SmtpConfig {
  host?: string;
  port?: number;
  /** Implicit TLS (SMTPS, usually port 465). */
  secure: boolean;
  /** STARTTLS on a plain connection: `opportunistic` (when offered), `required`, or `off`. */
  starttls: 'opportunistic' | 'required' | 'off';
  user?: string;
  password?: string;
  from: string;
  /** PEM file of the CA(s) to trust for the server's certificate instead of the system CAs. */
  caFile?: string;
}

export interface TransportConfig {
  timeoutMs: number;
  pagerdutyUrl: string;
  slackWebhookUrl?: string;
  slackToken?: string;
  slackApiUrl: string;
  smtp: SmtpConfig;
  /** Wall clock (ms) for signature timestamps. */
  clock: () => number;
}

/** Header names Waggle sets on webhook requests (a recipient's own headers cannot replace them). */
export const WEBHOOK_HEADERS = {
  deliveryId: 'x-honeycomb-webhook-delivery-id',
  token: 'x-honeycomb-webhook-token',
  timestamp: 'x-honeycomb-webhook-timestamp',
  signature: 'x-honeycomb-webhook-signature',
} as const;

/** `sha256=` + hex HMAC-SHA256 of `${timestamp}.${body}` keyed with the secret. */
export function webhookSignature(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

const UNSETTABLE = new Set(['host', 'content-length', 'connection', 'transfer-encoding', 'keep-alive', 'upgrade', 'te', 'trailer', ...Object.values(WEBHOOK_HEADERS)]);

/** Milliseconds from a Retry-After header (seconds or an HTTP date). */
function retryAfter(value: string | null, now: number): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const t = Date.parse(value);
  return Number.isNaN(t) ? undefined : Math.max(0, t - now);
}

async function readSome(res: Response, limit = 2048): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let n = 0;
  try {
    while (n < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      n += value.length;
    }
  } catch {
    // A body cut short is still an answer; the status decides.
  } finally {
    reader.cancel().catch(() => {});
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, limit);
}

const snippet = (s: string) => s.replace(/\s+/g, ' ').trim().slice(0, 200);

/** The reason a fetch threw, without the URL (webhook URLs may carry secrets). */
function networkReason(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code) return `${cause.code}${cause.message ? `: ${cause.message}` : ''}`;
  return cause?.message ?? (err as Error).message ?? String(err);
}

/** POSTs `body` and classifies the answer. `onAnswer` may turn a 2xx into a failure (Slack's ok:false). */
export async function post(
  url: string,
  body: string,
  headers: Record<string, string>,
  cfg: TransportConfig,
  stop: AbortSignal,
  onAnswer?: (status: number, text: string) => AttemptResult | undefined,
): Promise<AttemptResult> {
  const timeout = AbortSignal.timeout(cfg.timeoutMs);
  let res: Response;
  try {
    res = await fetch(url, { method: 'POST', body, headers, redirect: 'manual', signal: AbortSignal.any([timeout, stop]) });
  } catch (err) {
    if (stop.aborted) return { ok: false, retryable: true, interrupted: true, error: 'interrupted by shutdown' };
    if (timeout.aborted) return { ok: false, retryable: true, error: `no answer within ${cfg.timeoutMs} ms` };
    if (err instanceof TypeError && err.message === 'fetch failed') return { ok: false, retryable: true, error: `network error: ${networkReason(err)}` };
    return { ok: false, retryable: false, error: `request not sent: ${(err as Error).message}` };
  }
  const text = await readSome(res);
  const status = res.status;
  const special = onAnswer?.(status, text);
  if (special) return { httpStatus: status, ...special };
  if (status >= 200 && status < 300) return { ok: true, retryable: false, httpStatus: status };
  const detail = snippet(text);
  const error = `HTTP ${status}${detail ? `: ${detail}` : ''}`;
  if (status >= 300 && status < 400) return { ok: false, retryable: false, httpStatus: status, error: `${error} (redirects are not followed)` };
  const retryable = status >= 500 || status === 429 || status === 408;
  return { ok: false, retryable, httpStatus: status, error, retryAfterMs: retryable ? retryAfter(res.headers.get('retry-after'), cfg.clock()) : undefined };
}

const JSON_TYPE = 'application/json';
const USER_AGENT = 'Waggle-Notifier/1.0';

async function sendWebhook(r: Extract<Recipient, { type: 'webhook' }>, n: Notification, deliveryId: string, cfg: TransportConfig, stop: AbortSignal) {
  const d = r.details;
  const template = templateFor(d, n);
  let body: string;
  let contentType = JSON_TYPE;
  if (template) {
    const json = looksLikeJson(template);
    body = renderTemplate(template, templateData(n, templateVars(d, n), deliveryId), { json });
    if (!json) contentType = 'text/plain; charset=utf-8';
  } else {
    body = JSON.stringify(defaultWebhookPayload(n, deliveryId));
  }
  const headers: Record<string, string> = { 'content-type': contentType, 'user-agent': USER_AGENT };
  for (const h of d.webhook_headers ?? []) {
    if (!UNSETTABLE.has(h.header.toLowerCase())) headers[h.header.toLowerCase()] = h.value ?? '';
  }
  headers[WEBHOOK_HEADERS.deliveryId] = deliveryId;
  if (d.webhook_secret) {
    const ts = String(Math.floor(cfg.clock() / 1000));
    headers[WEBHOOK_HEADERS.token] = d.webhook_secret;
    headers[WEBHOOK_HEADERS.timestamp] = ts;
    headers[WEBHOOK_HEADERS.signature] = webhookSignature(d.webhook_secret, ts, body);
  }
  return post(d.webhook_url, body, headers, cfg, stop);
}

/** Slack Web API errors worth retrying (everything else, e.g. channel_not_found, is final). */
const SLACK_RETRYABLE = new Set(['ratelimited', 'rate_limited', 'service_unavailable', 'internal_error', 'fatal_error', 'request_timeout']);

async function sendSlack(channel: string, n: Notification, cfg: TransportConfig, stop: AbortSignal): Promise<AttemptResult> {
  const message = slackMessage(n, channel);
  if (cfg.slackToken) {
    const url = `${cfg.slackApiUrl.replace(/\/+$/, '')}/chat.postMessage`;
    const headers = { 'content-type': 'application/json; charset=utf-8', authorization: `Bearer ${cfg.slackToken}`, 'user-agent': USER_AGENT };
    return post(url, JSON.stringify(message), headers, cfg, stop, (status, text) => {
      if (status < 200 || status >= 300) return undefined;
      let answer: { ok?: boolean; error?: string } = {};
      try {
        answer = JSON.parse(text) as typeof answer;
      } catch {
        return { ok: false, retryable: true, error: `Slack answered ${status} with a body that is not JSON` };
      }
      if (answer.ok === true) return { ok: true, retryable: false };
      return { ok: false, retryable: SLACK_RETRYABLE.has(String(answer.error)), error: `Slack error: ${answer.error ?? 'unknown'}` };
    });
  }
  if (cfg.slackWebhookUrl) {
    return post(cfg.slackWebhookUrl, JSON.stringify(message), { 'content-type': JSON_TYPE, 'user-agent': USER_AGENT }, cfg, stop);
  }
  return { ok: false, retryable: false, error: 'Slack is not configured: set WAGGLE_SLACK_TOKEN (chat.postMessage) or WAGGLE_SLACK_WEBHOOK_URL' };
}

class CaFileError extends Error {}

type Mailer = ReturnType<typeof nodemailer.createTransport>;

/** Sends over one SMTP transporter per notifier (made on first use). */
export class EmailSender {
  private mailer?: Mailer;
  constructor(private readonly cfg: TransportConfig) {}

  private transporter(): Mailer {
    const s = this.cfg.smtp;
    if (this.mailer) return this.mailer;
    // Read at first use; a file that cannot be read fails the delivery (CaFileError, not retried).
    let ca: string | undefined;
    if (s.caFile) {
      try {
        ca = readFileSync(s.caFile, 'utf8');
      } catch (err) {
        throw new CaFileError(`could not read WAGGLE_SMTP_CA_FILE: ${(err as Error).message}`);
      }
    }
    this.mailer = nodemailer.createTransport({
      host: s.host,
      port: s.port ?? (s.secure ? 465 : 587),
      secure: s.secure,
      requireTLS: s.starttls === 'required',
      ignoreTLS: s.starttls === 'off',
      auth: s.user ? { user: s.user, pass: s.password ?? '' } : undefined,
      connectionTimeout: this.cfg.timeoutMs,
      greetingTimeout: this.cfg.timeoutMs,
      socketTimeout: this.cfg.timeoutMs,
      // Certificates are always verified; a CA file replaces the system CAs.
      tls: { rejectUnauthorized: true, ...(ca ? { ca } : {}) },
    });
    return this.mailer;
  }

  async send(to: string, n: Notification, deliveryId: string): Promise<AttemptResult> {
    if (!this.cfg.smtp.host) return { ok: false, retryable: false, error: 'email is not configured: set WAGGLE_SMTP_HOST' };
    const m = emailMessage(n);
    try {
      await this.transporter().sendMail({
        from: this.cfg.smtp.from,
        to,
        subject: m.subject,
        text: m.text,
        html: m.html,
        headers: { 'X-Waggle-Delivery-Id': deliveryId, 'X-Waggle-Alert-Id': n.alert.id },
      });
      return { ok: true, retryable: false };
    } catch (err) {
      if (err instanceof CaFileError) return { ok: false, retryable: false, error: err.message };
      const e = err as { responseCode?: number; code?: string; message?: string; response?: string };
      const code = e.responseCode;
      // SMTP 4xx is transient, 5xx permanent; no code means the connection failed.
      const retryable = code === undefined ? true : code < 500;
      const what = code !== undefined ? `SMTP ${code}: ${snippet(e.response ?? e.message ?? '')}` : `${e.code ?? 'SMTP error'}: ${snippet(e.message ?? String(err))}`;
      return { ok: false, retryable, error: what };
    }
  }

  close(): void {
    this.mailer?.close();
    this.mailer = undefined;
  }
}

/** One attempt to deliver `n` to `r`. Template problems are final failures. */
export async function sendOnce(
  r: Recipient,
  n: Notification,
  deliveryId: string,
  cfg: TransportConfig,
  email: EmailSender,
  stop: AbortSignal,
): Promise<AttemptResult> {
  try {
    switch (r.type) {
      case 'webhook':
        return await sendWebhook(r, n, deliveryId, cfg, stop);
      case 'slack':
        return await sendSlack(r.details.slack_channel, n, cfg, stop);
      case 'msteams':
        return await post(r.details.webhook_url, JSON.stringify(teamsMessageCard(n)), { 'content-type': JSON_TYPE, 'user-agent': USER_AGENT }, cfg, stop);
      case 'msteams_workflow':
        return await post(r.details.webhook_url, JSON.stringify(teamsWorkflowMessage(n)), { 'content-type': JSON_TYPE, 'user-agent': USER_AGENT }, cfg, stop);
      case 'pagerduty': {
        const url = `${cfg.pagerdutyUrl.replace(/\/+$/, '')}/v2/enqueue`;
        const body = JSON.stringify(pagerDutyEvent(n, r.details.pagerduty_integration_key));
        return await post(url, body, { 'content-type': JSON_TYPE, 'user-agent': USER_AGENT }, cfg, stop);
      }
      case 'email':
        return await email.send(r.details.email_address, n, deliveryId);
    }
  } catch (err) {
    if (err instanceof TemplateError) return { ok: false, retryable: false, error: `payload template: ${err.message}` };
    return { ok: false, retryable: false, error: `could not deliver: ${(err as Error).message ?? String(err)}` };
  }
  return { ok: false, retryable: false, error: `unknown recipient type ${(r as { type: string }).type}` };
}
