// The one place the UI talks to the server (fetch). Every call is same-origin and carries the
// session cookie (HttpOnly: no script ever sees it); the key itself is sent only once, to sign
// in, in a request body. Errors come back as ApiError with the server's message and, for 422s,
// the fields it names (the query builder shows each next to its clause).

/** The path the server is mounted under behind a proxy ('' at the root), given by the page. */
export const BASE = document.querySelector<HTMLMetaElement>('meta[name="waggle-base"]')?.content ?? '';

export interface FieldProblem {
  field: string;
  description: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly fields: FieldProblem[] = [],
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

type Listener = () => void;
const unauthenticated = new Set<Listener>();
/** Called whenever the server says the session is gone (401): the app shows the sign-in page. */
export function onUnauthenticated(fn: Listener): () => void {
  unauthenticated.add(fn);
  return () => unauthenticated.delete(fn);
}

export async function request<T>(method: string, path: string, body?: unknown, opts: { signal?: AbortSignal; quiet401?: boolean; onHeaders?: (h: Headers) => void; headers?: Record<string, string> } = {}): Promise<T> {
  let res: Response;
  try {
    res = await fetch(`${BASE}${path}`, {
      method,
      credentials: 'same-origin',
      headers: { accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...opts.headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: opts.signal,
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(0, 'Waggle cannot be reached: check that the server is running.');
  }
  opts.onHeaders?.(res.headers);
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  let data: unknown = undefined;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: reported below
  }
  if (!res.ok) {
    const e = (data ?? {}) as { error?: string; detail?: string; type_detail?: FieldProblem[] };
    if (res.status === 401 && !opts.quiet401) for (const fn of unauthenticated) fn();
    throw new ApiError(res.status, e.detail ?? e.error ?? `${res.status} ${res.statusText}`, e.type_detail ?? []);
  }
  return data as T;
}

export const get = <T>(path: string, signal?: AbortSignal) => request<T>('GET', path, undefined, { signal });
export const post = <T>(path: string, body: unknown, signal?: AbortSignal) => request<T>('POST', path, body, { signal });
