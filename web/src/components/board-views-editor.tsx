// A board's views in its Edit mode: each a name and its filters, created, renamed, changed and
// deleted one at a time through /1/boards/{id}/views (the board's Save does not touch them).
// A value that reads as a number is sent as one; `in`/`not-in` take a comma-separated list;
// `exists`/`does-not-exist` no value.
import { useState } from 'preact/hooks';
import { createBoardView, deleteBoardView, updateBoardView } from '../api/endpoints.js';
import { FILTER_OPS, type BoardView } from '../api/types.js';
import { ErrorNotice } from './ui.js';

interface DraftFilter {
  column: string;
  operation: string;
  value: string;
}
interface Draft {
  id?: string;
  key: number;
  name: string;
  filters: DraftFilter[];
  saved: boolean;
  error?: unknown;
}

const NO_VALUE = ['exists', 'does-not-exist'];
const LIST = ['in', 'not-in'];
let nextKey = 1;

const scalar = (s: string): string | number => (/^-?\d+(\.\d+)?$/.test(s.trim()) ? Number(s.trim()) : s);

/** A filter as typed, as the API takes it. */
export function viewFilter(f: DraftFilter): BoardView['filters'][number] {
  if (NO_VALUE.includes(f.operation)) return { column: f.column.trim(), operation: f.operation };
  if (LIST.includes(f.operation)) return { column: f.column.trim(), operation: f.operation, value: f.value.split(',').map((s) => s.trim()).filter(Boolean).map(scalar) };
  return { column: f.column.trim(), operation: f.operation, value: scalar(f.value) };
}

const draftOf = (v: BoardView): Draft => ({
  id: v.id,
  key: nextKey++,
  name: v.name,
  saved: true,
  filters: v.filters.map((f) => ({ column: f.column, operation: f.operation, value: f.value === undefined ? '' : Array.isArray(f.value) ? f.value.join(', ') : String(f.value) })),
});

export function BoardViewsEditor({ boardId, views, columns }: { boardId: string; views: BoardView[]; columns: string[] }) {
  const [drafts, setDrafts] = useState<Draft[]>(() => views.map(draftOf));
  const set = (key: number, change: Partial<Draft>) => setDrafts((list) => list.map((d) => (d.key === key ? { ...d, saved: false, error: undefined, ...change } : d)));
  const save = async (d: Draft) => {
    const body = { name: d.name.trim(), filters: d.filters.filter((f) => f.column.trim() !== '').map(viewFilter) };
    try {
      const v = d.id ? await updateBoardView(boardId, d.id, body) : await createBoardView(boardId, body);
      setDrafts((list) => list.map((x) => (x.key === d.key ? { ...draftOf(v), key: d.key } : x)));
    } catch (error) {
      setDrafts((list) => list.map((x) => (x.key === d.key ? { ...x, error } : x)));
    }
  };
  const remove = async (d: Draft) => {
    if (d.id) {
      if (!confirm(`Delete the view "${d.name}"?`)) return;
      try {
        await deleteBoardView(boardId, d.id);
      } catch (error) {
        return setDrafts((list) => list.map((x) => (x.key === d.key ? { ...x, error } : x)));
      }
    }
    setDrafts((list) => list.filter((x) => x.key !== d.key));
  };
  return (
    <section class="panel" data-testid="views-editor">
      <div class="row">
        <h2 style={{ margin: 0 }}>Views</h2>
        <span class="small muted">Named sets of filters a reader picks from the View menu; each is saved on its own.</span>
        <span class="spacer" />
        <button onClick={() => setDrafts([...drafts, { key: nextKey++, name: '', filters: [{ column: columns[0] ?? '', operation: '=', value: '' }], saved: false }])}>
          New view
        </button>
      </div>
      <datalist id="view-columns">
        {columns.map((c) => (
          <option key={c} value={c} />
        ))}
      </datalist>
      {drafts.length === 0 && <p class="small muted">No views yet.</p>}
      {drafts.map((d) => (
        <div class="view-draft" key={d.key} data-view={d.name}>
          <div class="row">
            <input aria-label="View name" placeholder="View name" value={d.name} maxLength={255} onInput={(e) => set(d.key, { name: (e.target as HTMLInputElement).value })} />
            <button class="primary" disabled={d.saved || d.name.trim() === '' || !d.filters.some((f) => f.column.trim())} onClick={() => save(d)}>
              {d.id ? 'Save view' : 'Create view'}
            </button>
            <button class="danger" onClick={() => remove(d)}>
              {d.id ? 'Delete view' : 'Discard'}
            </button>
            {d.saved && <span class="small muted">saved</span>}
          </div>
          {d.filters.map((f, i) => {
            const setF = (change: Partial<DraftFilter>) => set(d.key, { filters: d.filters.map((x, j) => (j === i ? { ...x, ...change } : x)) });
            return (
              <div class="row" key={i} style={{ marginTop: '4px' }}>
                <input aria-label="Filter column" placeholder="column" list="view-columns" value={f.column} onInput={(e) => setF({ column: (e.target as HTMLInputElement).value })} />
                <select aria-label="Filter operation" value={f.operation} onChange={(e) => setF({ operation: (e.target as HTMLSelectElement).value })}>
                  {FILTER_OPS.map((op) => (
                    <option key={op} value={op}>
                      {op}
                    </option>
                  ))}
                </select>
                {!NO_VALUE.includes(f.operation) && (
                  <input
                    aria-label="Filter value"
                    placeholder={LIST.includes(f.operation) ? 'a, b, c' : 'value'}
                    value={f.value}
                    onInput={(e) => setF({ value: (e.target as HTMLInputElement).value })}
                  />
                )}
                <button class="icon" aria-label="Remove filter" onClick={() => set(d.key, { filters: d.filters.filter((_, j) => j !== i) })}>
                  ✕
                </button>
              </div>
            );
          })}
          <button class="add" onClick={() => set(d.key, { filters: [...d.filters, { column: '', operation: '=', value: '' }] })}>
            + Filter
          </button>
          {d.error !== undefined && <ErrorNotice error={d.error} />}
        </div>
      ))}
    </section>
  );
}
