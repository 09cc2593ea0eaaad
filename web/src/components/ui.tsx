// Small building blocks every page uses: loading and error states, badges, the async-data hook.
import { Fragment, type ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api/client.js';

export function Spinner({ label = 'Loading' }: { label?: string }) {
  return (
    <span class="row muted" role="status">
      <span class="spinner" aria-hidden="true" />
      {label}…
    </span>
  );
}

export function ErrorNotice({ error, title }: { error: unknown; title?: string }) {
  const message = error instanceof Error ? error.message : String(error);
  const fields = error instanceof ApiError ? error.fields : [];
  return (
    <div class="notice error" role="alert">
      {title && <strong>{title}: </strong>}
      {fields.length === 0 ? message : (
        <ul>
          {fields.map((f) => (
            <li key={f.field}>{f.field}: {f.description}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <div class="empty">{children}</div>;
}

export function PageHead({ title, sub, children }: { title: ComponentChildren; sub?: ComponentChildren; children?: ComponentChildren }) {
  return (
    <div class="page-head">
      <div>
        <h1>{title}</h1>
        {sub && <div class="sub">{sub}</div>}
      </div>
      <div class="spacer" />
      {children}
    </div>
  );
}

export interface Async<T> {
  data?: T;
  error?: unknown;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` when `deps` change (aborting the previous run) and tracks its state. */
export function useAsync<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]): Async<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  useEffect(() => {
    const ctl = new AbortController();
    setState((s) => ({ data: s.data, loading: true }));
    loadRef.current(ctl.signal).then(
      (data) => !ctl.signal.aborted && setState({ data, loading: false }),
      (error) => !ctl.signal.aborted && (error as Error)?.name !== 'AbortError' && setState({ error, loading: false }),
    );
    return () => ctl.abort();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

export function Loaded<T>({ async: a, children, label }: { async: Async<T>; children: (data: T) => ComponentChildren; label?: string }) {
  if (a.error) return <ErrorNotice error={a.error} />;
  if (a.data === undefined) return <Spinner label={label} />;
  return <>{children(a.data)}</>;
}

/**
 * A field name that may break across lines only after its dots and underscores
 * (`http.response.status_code`), never in the middle of a word while those are left.
 */
export function FieldName({ name }: { name: string }) {
  const parts = name.split(/(?<=[._/-])/);
  return (
    <>
      {parts.map((p, i) => (
        <Fragment key={i}>
          {p}
          {i < parts.length - 1 && <wbr />}
        </Fragment>
      ))}
    </>
  );
}
