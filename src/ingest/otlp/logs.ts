// OTLP log records → events, as Honeycomb stores them (docs/otlp.md; husky's otlp/logs.go).
// Precedence when names collide: the record's attributes, then the scope's, then the
// resource's, then Honeycomb's fields (written lowest first, so that the later write wins).
import { addAttributes, addValue, jsonText, sampleRateOf } from './attributes.js';
import { logsDataset } from './datasets.js';
import { KvList, type LogRecord, type OtlpRequest } from './model.js';
import { addRow, resourceRows, scopeFields, traceIdText, type Refusal, type Translated } from './rows.js';
import type { IngestLimits } from '../normalise.js';

const SEVERITIES = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'];

/** 1–4 trace, 5–8 debug, 9–12 info, 13–16 warn, 17–20 error, 21–24 fatal, else unspecified. */
export const severityOf = (n: number) => (n >= 1 && n <= 24 ? SEVERITIES[Math.floor((n - 1) / 4)] : 'unspecified');

/**
 * `receivedUs`: the time of a record that gives neither time nor observed time (the OTel log
 * data model: the time, else the observed time).
 */
export function translateLogs(req: OtlpRequest<LogRecord>, datasetHeader: string | undefined, limits: IngestLimits, receivedUs: number): Translated {
  const refused: Refusal[] = [];
  const { byDataset, resources } = resourceRows(req, limits, (service) => logsDataset(datasetHeader, service), () => 1);
  let item = 0;
  req.forEach((res, i) => {
    const { fields: resource, rate: resourceRate, rows } = resources[i];
    for (const sc of res.scopes) {
      const scope = scopeFields(sc.scope, sc.schemaUrl);
      const scopeRate = sampleRateOf(sc.scope.attributes) ?? resourceRate;
      for (const log of sc.items) {
        addRow(rows, refused, item++, 1, () => {
          rows.set('severity', severityOf(log.severityNumber));
          rows.set('severity_code', log.severityNumber);
          rows.set('meta.signal_type', 'log');
          rows.set('flags', log.flags);
          if (log.traceId !== '') {
            rows.set('trace.trace_id', traceIdText(log.traceId));
            rows.set('meta.annotation_type', 'span_event');
          }
          // The span id as the parent: the trace view shows the log as one of the span's events.
          if (log.spanId !== '') rows.set('trace.parent_id', log.spanId);
          if (log.severityText !== '') rows.set('severity_text', log.severityText);
          if (log.eventName !== '') rows.set('event.name', log.eventName);
          if (log.body !== undefined && log.body !== null) {
            addValue(rows, 'body', log.body, 0);
            // A map body is flattened to body.* and also kept whole.
            if (log.body instanceof KvList) {
              const whole = jsonText(log.body);
              if (whole !== undefined) rows.set('body', whole);
            }
          }
          resource.writeTo(rows);
          scope.writeTo(rows);
          addAttributes(rows, log.attributes);
          const timeUs = log.timeUs !== 0 || log.timeNs !== 0 ? log.timeUs : log.observedUs !== 0 || log.observedNs !== 0 ? log.observedUs : receivedUs;
          return { timeUs, samplerate: sampleRateOf(log.attributes) ?? scopeRate ?? 1 };
        });
      }
    }
  });
  return { groups: byDataset.finish(), items: item, refused };
}
