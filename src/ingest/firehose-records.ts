// Amazon Data Firehose records (POST /1/kinesis_events, src/api/v1/kinesis.ts): one record's
// base64 data, perhaps gzip-compressed, holds JSON event fields (one object, or several
// newline-delimited) or a CloudWatch Logs subscription message; decodeRecord turns it into events.
import { isUtf8 } from 'node:buffer';
import { ApiError } from '../errors.js';
import { DecodeError, decompress } from './decode.js';

/** Years 0001 to 9999 in milliseconds: the times an event can have. */
const MIN_TIME_MS = -62_135_596_800_000;
const MAX_TIME_MS = 253_402_300_799_999;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** A record (or the request) that cannot be turned into events. */
export class Undecodable extends Error {}

export type Fields = Record<string, unknown>;

export function isPlainObject(v: unknown): v is Fields {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}


/** A CloudWatch Logs subscription message, as CloudWatch Logs hands it to Firehose. */
function isCloudWatchLogs(v: Fields): boolean {
  return typeof v.messageType === 'string' && Array.isArray(v.logEvents) && 'logGroup' in v;
}

/**
 * One log event of a DATA_MESSAGE → its event. A message that is a JSON object contributes its
 * fields (and the raw `message` is dropped: the fields carry it); otherwise `message` is the
 * text. logGroup, logStream, owner and id fill in names the message's fields do not use.
 */
function logEventToEvent(envelope: Fields, logEvent: unknown): { data: Fields; timeUs: number } {
  if (!isPlainObject(logEvent) || typeof logEvent.message !== 'string') {
    throw new Undecodable('CloudWatch Logs event without a message');
  }
  const ts = logEvent.timestamp;
  if (typeof ts !== 'number' || !Number.isFinite(ts)) throw new Undecodable('CloudWatch Logs event without a numeric timestamp');
  if (ts < MIN_TIME_MS || ts > MAX_TIME_MS) throw new Undecodable('CloudWatch Logs event timestamp is out of range (years 0001 to 9999)');
  const meta: Fields = { logGroup: envelope.logGroup, logStream: envelope.logStream, owner: envelope.owner, id: logEvent.id };
  let parsed: unknown;
  const text = logEvent.message.trim();
  if (text.startsWith('{') && text.endsWith('}')) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined; // looks like JSON but is not: keep it as text
    }
  }
  const data = isPlainObject(parsed) ? { ...meta, ...parsed } : { message: logEvent.message, ...meta };
  return { data, timeUs: Math.trunc(ts * 1000) };
}

/** JSON values of a record: one JSON document, or newline-delimited JSON documents. */
function parseRecordJson(text: string): unknown[] {
  try {
    return [JSON.parse(text)];
  } catch (err) {
    if (!text.includes('\n')) throw new Undecodable(`data is not JSON: ${(err as Error).message}`);
  }
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line, n) => {
      try {
        return JSON.parse(line);
      } catch (err) {
        throw new Undecodable(`line ${n + 1} of the data is not JSON: ${(err as Error).message}`);
      }
    });
}

/**
 * Decodes one record into event data. `budget` is what is left of the decompressed-size cap for
 * the whole request; returns the events and the bytes used.
 */
export async function decodeRecord(record: unknown, budget: number, receivedUs: number): Promise<{ events: { data: Fields; timeUs: number }[]; bytes: number }> {
  if (!isPlainObject(record) || typeof record.data !== 'string') throw new Undecodable('data must be a base64 string');
  if (record.data.length % 4 !== 0 || !BASE64.test(record.data)) throw new Undecodable('data is not valid base64');
  let bytes: Buffer = Buffer.from(record.data, 'base64');
  if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      bytes = await decompress(bytes, 'gzip', Math.max(1, budget)); // zlib wants a cap of at least 1
    } catch (err) {
      if (err instanceof DecodeError && err.kind === 'too-large') throw new ApiError(413, 'Request body is too large.');
      if (err instanceof DecodeError) throw new Undecodable(err.message);
      throw err;
    }
  }
  if (bytes.length > budget) throw new ApiError(413, 'Request body is too large.');
  // Bytes that are not UTF-8 become U+FFFD, as in every other ingest body (normalise.ts,
  // wellFormed); data that is not text at all is named as such.
  let values: unknown[];
  try {
    values = parseRecordJson(bytes.toString('utf8'));
  } catch (err) {
    if (!isUtf8(bytes)) throw new Undecodable('data is neither JSON nor gzip (not UTF-8 text)');
    throw err;
  }
  const events: { data: Fields; timeUs: number }[] = [];
  for (const value of values) {
    if (!isPlainObject(value)) throw new Undecodable('data must be a JSON object');
    if (!isCloudWatchLogs(value)) {
      events.push({ data: value, timeUs: receivedUs });
      continue;
    }
    if (value.messageType === 'CONTROL_MESSAGE') continue;
    if (value.messageType !== 'DATA_MESSAGE') {
      throw new Undecodable(`unknown CloudWatch Logs messageType ${JSON.stringify(String(value.messageType).slice(0, 64))}`);
    }
    for (const logEvent of value.logEvents as unknown[]) events.push(logEventToEvent(value, logEvent));
  }
  return { events, bytes: bytes.length };
}
