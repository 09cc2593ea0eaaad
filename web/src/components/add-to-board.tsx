// "Add to board" on a query's result: picks a board (or names a new one), a title, the chart type
// and style; saves the query (POST /1/queries), names it with a query annotation (the API's query
// panels name one), and adds a query panel at the board's first free place (PUT /1/boards/{id},
// the whole board as it is plus the panel; or POST /1/boards for a new board).
import { useState } from 'preact/hooks';
import { createBoard, createQuery, createQueryAnnotation, getBoard, listBoards, updateBoard } from '../api/endpoints.js';
import type { Board, QuerySpec } from '../api/types.js';
import { firstFree, positionOf, rectOf, settle } from '../board-grid.js';
import { CHART_TYPES, panelTitle, queryPanel, QUERY_STYLES } from '../board-options.js';
import { describeQuery } from '../describe.js';
import { Link } from '../router.js';
import { pathOf, type Scope } from '../routes.js';
import { ErrorNotice, useAsync } from './ui.js';

const NEW = '__new';

export function AddToBoard({ scope, dataset, spec }: { scope: Scope; dataset: string; spec: QuerySpec }) {
  const [open, setOpen] = useState(false);
  const [added, setAdded] = useState<Board>();
  return (
    <div class="timepicker add-to-board" onKeyDown={(e) => e.key === 'Escape' && setOpen(false)}>
      <button type="button" aria-expanded={open} onClick={() => (setOpen(!open), setAdded(undefined))}>
        Add to board
      </button>
      {open && (
        <div class="menu" role="dialog" aria-label="Add to board" style={{ left: 'auto', right: 0, width: '360px' }}>
          {added ? (
            <p class="small" role="status" style={{ margin: 0 }}>
              Added to <Link href={pathOf({ page: 'board', boardId: added.id, ...scope })}>{added.name}</Link>.
            </p>
          ) : (
            <AddForm dataset={dataset} spec={spec} onAdded={setAdded} />
          )}
        </div>
      )}
    </div>
  );
}

function AddForm({ dataset, spec, onAdded }: { dataset: string; spec: QuerySpec; onAdded: (b: Board) => void }) {
  const boards = useAsync(() => listBoards(), []);
  const [boardId, setBoardId] = useState('');
  const [newName, setNewName] = useState('');
  const [title, setTitle] = useState(() => panelTitle(describeQuery(spec)));
  const [chartType, setChartType] = useState('line');
  const [style, setStyle] = useState('graph');
  const [state, setState] = useState<{ busy?: boolean; error?: unknown }>({});
  const target = boardId || (boards.data?.length ? boards.data[0].id : NEW);
  const making = target === NEW;
  const submit = async (e: Event) => {
    e.preventDefault();
    // (inside the query builder's form: its submit would run the query)
    e.stopPropagation();
    setState({ busy: true });
    try {
      const q = await createQuery(dataset, spec);
      const a = await createQueryAnnotation(dataset, { name: title.trim() || 'Query', query_id: q.id });
      const panel = queryPanel(q.id, a.id, chartType, style);
      if (making) {
        onAdded(await createBoard({ name: newName.trim(), description: '', type: 'flexible', panels: [{ ...panel, position: positionOf(firstFree([], 6, 6)) }] }));
        return;
      }
      const b = await getBoard(target);
      const rects = settle(b.panels.map((p) => rectOf(p.type, p.position)));
      const at = firstFree(rects, 6, 6);
      onAdded(
        await updateBoard(b.id, {
          name: b.name,
          description: b.description,
          type: 'flexible',
          layout_generation: 'manual',
          panels: [...b.panels, { ...panel, position: positionOf(at) }],
          ...(b.tags ? { tags: b.tags } : {}),
        }),
      );
    } catch (error) {
      setState({ error });
    }
  };
  return (
    <form class="add-to-board-form" onSubmit={submit}>
      <label class="field">
        Board
        <select name="board" value={target} onChange={(e) => setBoardId((e.target as HTMLSelectElement).value)}>
          {(boards.data ?? []).map((b) => (
            <option key={b.id} value={b.id}>
              {b.name}
            </option>
          ))}
          <option value={NEW}>New board…</option>
        </select>
      </label>
      {making && (
        <label class="field">
          Name of the new board
          <input name="new-board" required maxLength={255} value={newName} onInput={(e) => setNewName((e.target as HTMLInputElement).value)} />
        </label>
      )}
      <label class="field">
        Panel title
        <input name="title" maxLength={320} value={title} onInput={(e) => setTitle((e.target as HTMLInputElement).value)} />
      </label>
      <div class="row">
        <label class="field" style={{ flex: 1 }}>
          Chart type
          <select name="chart_type" value={chartType} onChange={(e) => setChartType((e.target as HTMLSelectElement).value)}>
            {CHART_TYPES.map(([v, t]) => (
              <option key={v} value={v}>
                {t}
              </option>
            ))}
          </select>
        </label>
        <label class="field" style={{ flex: 1 }}>
          Show
          <select name="query_style" value={style} onChange={(e) => setStyle((e.target as HTMLSelectElement).value)}>
            {QUERY_STYLES.map(([v, t]) => (
              <option key={v} value={v}>
                {t}
              </option>
            ))}
          </select>
        </label>
      </div>
      {state.error !== undefined && <ErrorNotice error={state.error} title="Not added" />}
      <div class="row">
        <button class="primary" type="submit" disabled={state.busy || boards.loading || (making && newName.trim() === '')}>
          {state.busy ? 'Adding…' : making ? 'Create board and add' : 'Add panel'}
        </button>
      </div>
    </form>
  );
}
