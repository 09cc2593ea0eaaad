// Typed calls of Waggle's public API (and its documented extensions) the pages use.
import { get, post, request } from './client.js';
import type {
  BandsAnswer, Board, BoardView, BubbleUpAnswer, BubbleUpBaseline, BubbleUpSelection, BurnAlert, CalculatedField, Column, Dataset, DatasetDetail, Delivery, HistoryEntry, Marker,
  QueryAnnotation, QueryResult, QuerySpec, RawEvent, Recipient, SignedIn, Slo, SloHistoryPoint, Trace, Trigger, TriggerHistory,
} from './types.js';

const seg = encodeURIComponent;

export const signIn = (key: string) => request<SignedIn>('POST', '/1/ui/session', { key }, { quiet401: true });
export const signOut = () => request<void>('DELETE', '/1/ui/session');
/** Who the session is (the same /1/auth every client calls); 401 when signed out. */
export const whoAmI = () => request<SignedIn & { type: string }>('GET', '/1/auth', undefined, { quiet401: true });

export const listDatasets = () => get<Dataset[]>('/1/datasets');
export const listColumns = (ds: string) => get<Column[]>(`/1/columns/${seg(ds)}`);
export const listCalculatedFields = (ds: string) => get<CalculatedField[]>(`/1/derived_columns/${seg(ds)}`);

export const getDataset = (ds: string) => get<DatasetDetail>(`/1/datasets/${seg(ds)}`);
export const updateDataset = (ds: string, body: { description: string; expand_json_depth: number; settings: { delete_protected: boolean } }) =>
  request<DatasetDetail>('PUT', `/1/datasets/${seg(ds)}`, body);
export const updateColumn = (ds: string, id: string, body: Pick<Column, 'type' | 'description' | 'hidden'>) =>
  request<Column>('PUT', `/1/columns/${seg(ds)}/${seg(id)}`, body);
type CalculatedFieldBody = Pick<CalculatedField, 'alias' | 'expression' | 'description'>;
export const createCalculatedField = (ds: string, body: CalculatedFieldBody) => post<CalculatedField>(`/1/derived_columns/${seg(ds)}`, body);
export const updateCalculatedField = (ds: string, id: string, body: CalculatedFieldBody) =>
  request<CalculatedField>('PUT', `/1/derived_columns/${seg(ds)}/${seg(id)}`, body);
export const deleteCalculatedField = (ds: string, id: string) => request<void>('DELETE', `/1/derived_columns/${seg(ds)}/${seg(id)}`);
/** The server's check of an expression (a Waggle extension): its type, or a 422 naming the position. */
export const validateExpression = (ds: string, body: { alias: string; expression: string; id?: string }, signal?: AbortSignal) =>
  post<{ type: string }>(`/1/derived_columns/${seg(ds)}/validate`, body, signal);

export const createQuery = (ds: string, spec: QuerySpec) => post<QuerySpec & { id: string }>(`/1/queries/${seg(ds)}`, spec);
export const getQuery = (ds: string, id: string) => get<QuerySpec & { id: string }>(`/1/queries/${seg(ds)}/${seg(id)}`);
/**
 * `background`: a run nobody asked for by hand (a board's panel, a trigger page's graph), which
 * the team's query history does not keep (`X-Waggle-Query-History: skip`).
 */
export const createResult = (ds: string, queryId: string, onWindow?: (w: ResultWindow) => void, background = false) =>
  request<QueryResult>('POST', `/1/query_results/${seg(ds)}`, { query_id: queryId, disable_other_by_aggregate: false, disable_total_by_aggregate: false }, {
    onHeaders: (h) => readWindow(h, onWindow),
    headers: background ? { 'x-waggle-query-history': 'skip' } : undefined,
  });

/** The window a result covers, Unix seconds [start, end). */
export interface ResultWindow {
  start: number;
  end: number;
}

/** Waggle's `X-Waggle-Window: <start>,<end>` header of a query result, when present. */
function readWindow(h: Headers, onWindow?: (w: ResultWindow) => void): void {
  const m = /^(\d+),(\d+)$/.exec(h.get('x-waggle-window') ?? '');
  if (m) onWindow?.({ start: Number(m[1]), end: Number(m[2]) });
}
/** The expected band of each series of a completed result (a Waggle extension, docs/queries.md). */
export const getBands = (ds: string, id: string, seasonality: 'day' | 'week', signal?: AbortSignal) =>
  get<BandsAnswer>(`/1/query_results/${seg(ds)}/${seg(id)}/bands?seasonality=${seasonality}`, signal);
export const getResult = (ds: string, id: string, signal?: AbortSignal) => get<QueryResult>(`/1/query_results/${seg(ds)}/${seg(id)}`, signal);

/**
 * A stored result with the window it covers (Unix seconds [start, end)), which Waggle's
 * `X-Waggle-Window` header says (the body, Honeycomb's, does not for a relative range).
 */
export async function getResultWindow(ds: string, id: string, signal?: AbortSignal): Promise<{ result: QueryResult; window?: { start: number; end: number } }> {
  let window: ResultWindow | undefined;
  const result = await request<QueryResult>('GET', `/1/query_results/${seg(ds)}/${seg(id)}`, undefined, { signal, onHeaders: (h) => readWindow(h, (w) => (window = w)) });
  return { result: result.complete ? result : await pollResult(ds, result, signal), window };
}

/** Polls a result until complete (the server long-polls each GET for up to a second). */
export async function pollResult(ds: string, result: QueryResult, signal?: AbortSignal): Promise<QueryResult> {
  let r = result;
  while (!r.complete) {
    if (signal?.aborted) throw new DOMException('aborted', 'AbortError');
    r = await getResult(ds, r.id, signal);
  }
  return r;
}

/**
 * Saves a spec and runs it: the completed result, with the window the server cut for it
 * (`window`, so the charts cut the same buckets; absent from a server without the header).
 * `onStage` reports progress; `background` as createResult's.
 */
export async function runQuery(
  ds: string,
  spec: QuerySpec,
  onStage?: (stage: 'saving' | 'running') => void,
  signal?: AbortSignal,
  opts: { background?: boolean } = {},
): Promise<QueryResult & { window?: ResultWindow }> {
  onStage?.('saving');
  const q = await createQuery(ds, spec);
  onStage?.('running');
  let window: ResultWindow | undefined;
  const created = await createResult(ds, q.id, (w) => (window = w), opts.background);
  return { ...(await pollResult(ds, created, signal)), window };
}

export const listMarkers = (ds: string) => get<Marker[]>(`/1/markers/${seg(ds)}`);

export const listBoards = () => get<Board[]>('/1/boards');
export const getBoard = (id: string) => get<Board>(`/1/boards/${seg(id)}`);
export const listBoardViews = (id: string) => get<BoardView[]>(`/1/boards/${seg(id)}/views`);
/** A board as sent (POST, or the full-replacement PUT): every panel with its position. */
export type BoardBody = Pick<Board, 'name' | 'description' | 'panels'> & Partial<Pick<Board, 'tags' | 'preset_filters'>> & { type: 'flexible'; layout_generation?: 'manual' | 'auto' };
export const createBoard = (body: BoardBody) => post<Board>('/1/boards', body);
export const updateBoard = (id: string, body: BoardBody) => request<Board>('PUT', `/1/boards/${seg(id)}`, body);
export const deleteBoard = (id: string) => request<void>('DELETE', `/1/boards/${seg(id)}`);
export const createBoardView = (id: string, body: Omit<BoardView, 'id'>) => post<BoardView>(`/1/boards/${seg(id)}/views`, body);
export const updateBoardView = (id: string, viewId: string, body: Omit<BoardView, 'id'>) => request<BoardView>('PUT', `/1/boards/${seg(id)}/views/${seg(viewId)}`, body);
export const deleteBoardView = (id: string, viewId: string) => request<void>('DELETE', `/1/boards/${seg(id)}/views/${seg(viewId)}`);
export const createQueryAnnotation = (ds: string, body: { name: string; description?: string; query_id: string }) => post<QueryAnnotation>(`/1/query_annotations/${seg(ds)}`, body);
export const getQueryAnnotation = (ds: string, id: string) => get<QueryAnnotation>(`/1/query_annotations/${seg(ds)}/${seg(id)}`);

export const listSlos = (ds: string) => get<Slo[]>(`/1/slos/${seg(ds)}`);
export const getSlo = (ds: string, id: string) => get<Slo>(`/1/slos/${seg(ds)}/${seg(id)}?detailed=true`);
type SloBody = Pick<Slo, 'name' | 'description' | 'sli' | 'time_period_days' | 'target_per_million'>;
export const createSlo = (ds: string, body: SloBody) => post<Slo>(`/1/slos/${seg(ds)}`, body);
export const updateSlo = (ds: string, id: string, body: SloBody) => request<Slo>('PUT', `/1/slos/${seg(ds)}/${seg(id)}`, body);
export const deleteSlo = (ds: string, id: string) => request<void>('DELETE', `/1/slos/${seg(ds)}/${seg(id)}`);
export const createBurnAlert = (ds: string, body: Record<string, unknown>) => post<BurnAlert>(`/1/burn_alerts/${seg(ds)}`, body);
export const deleteBurnAlert = (ds: string, id: string) => request<void>('DELETE', `/1/burn_alerts/${seg(ds)}/${seg(id)}`);
export const listBurnAlerts = (ds: string, sloId: string) => get<BurnAlert[]>(`/1/burn_alerts/${seg(ds)}?slo_id=${seg(sloId)}`);
export const sloHistory = (ids: string[], start: number, end: number) =>
  post<Record<string, SloHistoryPoint[]>>('/1/reporting/slos/historical', { ids, start_time: start, end_time: end });

export const listTriggers = (ds: string) => get<Trigger[]>(`/1/triggers/${seg(ds)}`);
export const createTrigger = (ds: string, body: Record<string, unknown>) => post<Trigger>(`/1/triggers/${seg(ds)}`, body);
export const updateTrigger = (ds: string, id: string, body: Record<string, unknown>) => request<Trigger>('PUT', `/1/triggers/${seg(ds)}/${seg(id)}`, body);
export const deleteTrigger = (ds: string, id: string) => request<void>('DELETE', `/1/triggers/${seg(ds)}/${seg(id)}`);
export const createMarker = (ds: string, body: { start_time: number; end_time?: number; message: string; type: string; url?: string }) =>
  post<Marker>(`/1/markers/${seg(ds)}`, body);
export const getTrigger = (ds: string, id: string) => get<Trigger>(`/1/triggers/${seg(ds)}/${seg(id)}`);
/** A trigger's state changes and deliveries (Waggle extension, docs/triggers.md). */
export const triggerHistory = (ds: string, id: string) => get<TriggerHistory>(`/1/triggers/${seg(ds)}/${seg(id)}/history`);
export const listRecipients = () => get<Recipient[]>('/1/recipients');
export const listDeliveries = (limit = 100, alertId?: string) =>
  get<Delivery[]>(`/1/deliveries?limit=${limit}${alertId ? `&alert_id=${seg(alertId)}` : ''}`);
export const createRecipient = (body: { type: string; details: Record<string, unknown> }) => post<Recipient>('/1/recipients', body);
export const updateRecipient = (id: string, body: { type: string; details: Record<string, unknown> }) => request<Recipient>('PUT', `/1/recipients/${seg(id)}`, body);
export const deleteRecipient = (id: string) => request<void>('DELETE', `/1/recipients/${seg(id)}`);
/** Queues a test notification (a Waggle extension); its delivery is found by the alert id. */
export const testRecipient = (id: string) => post<{ alert_id: string }>(`/1/recipients/${seg(id)}/test`, {});

export const bubbleUp = (ds: string, query: QuerySpec, selection: BubbleUpSelection, baseline: BubbleUpBaseline = { kind: 'rest' }, signal?: AbortSignal) =>
  post<BubbleUpAnswer>(`/1/bubbleup/${seg(ds)}`, { query, selection, baseline }, signal);
export const getTrace = (ds: string, traceId: string) => get<Trace>(`/1/traces/${seg(ds)}/${seg(traceId)}`);
export const getTypicalTrace = (ds: string, traceId: string) => get<import('./types.js').TypicalTrace>(`/1/traces/${seg(ds)}/${seg(traceId)}/typical`);
export const latestEvents = (ds: string, query: QuerySpec, limit: number, signal?: AbortSignal) =>
  post<{ events: RawEvent[] }>(`/1/raw_events/${seg(ds)}`, { query, limit }, signal);
/** The team's query history (Waggle extension, docs/queries.md): newest first, or the most-run specs. */
export function queryHistory(search: { dataset?: string; column?: string; q?: string; sort?: 'recent' | 'most_run'; limit?: number }, signal?: AbortSignal) {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(search)) if (v !== undefined && v !== '') params.set(k, String(v));
  const qs = params.toString();
  return get<HistoryEntry[]>(`/1/query_history${qs ? `?${qs}` : ''}`, signal);
}
