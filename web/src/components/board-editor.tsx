// A board's Edit mode (loaded only when "Edit" is pressed): its name and description; its panels
// on the 12-column grid, each moved by dragging its handle or with the arrow keys and buttons,
// resized by its corner or with the size buttons (web/src/board-grid.ts keeps them from
// overlapping), removed, a query panel's chart type and style chosen, a text panel's Markdown
// written; text and SLO panels added; preset filters. Save sends it all as one full-replacement
// PUT /1/boards/{id}. Delete removes the board. Views (below the grid) are saved one at a time
// with /1/boards/{id}/views, as the API keeps them.
import { useRef, useState } from 'preact/hooks';
import { deleteBoard, listSlos, updateBoard } from '../api/endpoints.js';
import type { Board, BoardPanel, BoardView } from '../api/types.js';
import { CHART_TYPES, QUERY_STYLES } from '../board-options.js';
import { cellsMoved, compact, firstFree, moveBy, moveTo, positionOf, rectOf, resizeBy, resizeTo, settle, DEFAULT_HEIGHT, type Rect } from '../board-grid.js';
import { PanelCompare, QueryPanel, SloPanel } from '../pages/board.js';
import { navigate } from '../router.js';
import { pathOf, type Scope } from '../routes.js';
import { BoardViewsEditor } from './board-views-editor.js';
import { ErrorNotice, PageHead, useAsync } from './ui.js';

const ROW_PX = 56;
const GAP_PX = 14;
const MAX_PRESETS = 5;

interface Item {
  key: number;
  panel: BoardPanel;
  rect: Rect;
}

let nextKey = 1;

export function BoardEditor({ scope, board, views, onDone }: { scope: Scope; board: Board; views: BoardView[]; onDone: (saved?: Board) => void }) {
  const [name, setName] = useState(board.name);
  const [description, setDescription] = useState(board.description);
  const [items, setItems] = useState<Item[]>(() => {
    const rects = settle(board.panels.map((p) => rectOf(p.type, p.position)));
    return board.panels.map((panel, i) => ({ key: nextKey++, panel, rect: rects[i] }));
  });
  const [presets, setPresets] = useState(board.preset_filters ?? []);
  const [state, setState] = useState<{ busy?: boolean; error?: unknown }>({});
  const [sloId, setSloId] = useState('');
  const slos = useAsync(() => listSlos('__all__'), []);
  const grid = useRef<HTMLDivElement>(null);

  const rects = items.map((it) => it.rect);
  const withRects = (next: Rect[], list = items) => list.map((it, i) => ({ ...it, rect: next[i] }));
  const apply = (op: (r: Rect[]) => Rect[]) => setItems((list) => withRects(op(list.map((it) => it.rect)), list));
  const setPanel = (i: number, panel: BoardPanel) => setItems((list) => list.map((it, j) => (j === i ? { ...it, panel } : it)));
  const add = (panel: BoardPanel) =>
    setItems((list) => [...list, { key: nextKey++, panel, rect: firstFree(list.map((it) => it.rect), 6, DEFAULT_HEIGHT[panel.type]) }]);
  const remove = (i: number) =>
    setItems((list) => {
      const rest = list.filter((_, j) => j !== i);
      return withRects(compact(rest.map((it) => it.rect)), rest);
    });

  // Dragging a panel's handle (move) or corner (resize): the layout follows the pointer.
  const drag = useRef<{ i: number; kind: 'move' | 'resize'; x: number; y: number; base: Rect[] } | null>(null);
  const startDrag = (e: PointerEvent, i: number, kind: 'move' | 'resize') => {
    if (e.button !== 0) return;
    e.preventDefault();
    (e.currentTarget as Element).setPointerCapture(e.pointerId);
    drag.current = { i, kind, x: e.clientX, y: e.clientY, base: rects };
  };
  const onDrag = (e: PointerEvent) => {
    const d = drag.current;
    if (!d || !grid.current) return;
    const cells = cellsMoved(e.clientX - d.x, e.clientY - d.y, grid.current.clientWidth, ROW_PX, GAP_PX);
    const r = d.base[d.i];
    setItems((list) =>
      withRects(d.kind === 'move' ? moveTo(d.base, d.i, r.x + cells.dx, r.y + cells.dy) : resizeTo(d.base, d.i, r.w + cells.dx, r.h + cells.dy), list),
    );
  };
  const endDrag = () => {
    drag.current = null;
  };
  const keyMove = (e: KeyboardEvent, i: number) => {
    const step = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] }[e.key];
    if (!step) return;
    e.preventDefault();
    apply((r) => (e.shiftKey ? resizeBy(r, i, step[0], step[1]) : moveBy(r, i, step[0], step[1])));
  };

  const save = async () => {
    setState({ busy: true });
    try {
      const saved = await updateBoard(board.id, {
        name,
        description,
        type: 'flexible',
        layout_generation: 'manual',
        panels: items.map((it) => ({ ...it.panel, position: positionOf(it.rect) })),
        ...(board.tags ? { tags: board.tags } : {}),
        preset_filters: presets.filter((p) => p.column.trim() !== ''),
      });
      onDone(saved);
    } catch (error) {
      setState({ error });
    }
  };
  const remove_board = async () => {
    if (!confirm(`Delete the board "${board.name}" and its views?`)) return;
    setState({ busy: true });
    try {
      await deleteBoard(board.id);
      navigate(pathOf({ page: 'boards', ...scope }));
    } catch (error) {
      setState({ error });
    }
  };

  return (
    <div class="stack board-editor">
      <PageHead title={`Editing ${board.name}`} sub="Changes to the board are kept only when saved" />
      <section class="panel">
        <div class="row" style={{ alignItems: 'flex-end' }}>
          <label class="field" style={{ flex: '1 1 260px' }}>
            Name
            <input name="board-name" value={name} maxLength={255} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
          </label>
          <label class="field" style={{ flex: '2 1 360px' }}>
            Description
            <input name="board-description" value={description} maxLength={1024} onInput={(e) => setDescription((e.target as HTMLInputElement).value)} />
          </label>
        </div>
        <div class="row" style={{ marginTop: '12px' }}>
          <button class="primary" onClick={save} disabled={state.busy || name.trim() === ''} data-testid="save-board">
            {state.busy ? 'Saving…' : 'Save board'}
          </button>
          <button onClick={() => onDone()} disabled={state.busy}>
            Cancel
          </button>
          <span class="spacer" />
          <button class="danger" onClick={remove_board} disabled={state.busy}>
            Delete board
          </button>
        </div>
        {state.error !== undefined && <ErrorNotice error={state.error} title="The board was not saved" />}
      </section>

      <section class="panel">
        <div class="row">
          <h2 style={{ margin: 0 }}>Panels</h2>
          <span class="small muted">Drag a panel by ⠿ or its corner, or focus ⠿ and use the arrow keys (Shift+arrows resize).</span>
          <span class="spacer" />
          <button onClick={() => add({ type: 'text', text_panel: { content: '## Notes\n\nWrite **Markdown** here.' } })}>Add text panel</button>
          <select aria-label="SLO to add" value={sloId} onChange={(e) => setSloId((e.target as HTMLSelectElement).value)}>
            <option value="">Pick an SLO…</option>
            {(slos.data ?? []).map((s) => (
              <option key={s.id} value={s.id}>
                {s.name}
              </option>
            ))}
          </select>
          <button
            disabled={!sloId}
            onClick={() => {
              add({ type: 'slo', slo_panel: { slo_id: sloId } });
              setSloId('');
            }}
          >
            Add SLO panel
          </button>
        </div>
        <PresetFilters presets={presets} onChange={setPresets} />
      </section>

      {items.length === 0 ? (
        <div class="panel empty">No panels: add a text or SLO panel here, or "Add to board" from a query's result.</div>
      ) : (
        <div class="board-grid editing" ref={grid} onPointerMove={onDrag} onPointerUp={endDrag} onPointerCancel={endDrag}>
          {items.map((it, i) => (
            <EditCell
              key={it.key}
              item={it}
              scope={scope}
              onPanel={(p) => setPanel(i, p)}
              onStartDrag={(e, kind) => startDrag(e, i, kind)}
              onKey={(e) => keyMove(e, i)}
              onMove={(dx, dy) => apply((r) => moveBy(r, i, dx, dy))}
              onResize={(dw, dh) => apply((r) => resizeBy(r, i, dw, dh))}
              onRemove={() => remove(i)}
            />
          ))}
        </div>
      )}
      <BoardViewsEditor boardId={board.id} views={views} columns={presets.map((p) => p.column)} />
    </div>
  );
}

function PresetFilters({ presets, onChange }: { presets: { column: string; alias: string }[]; onChange: (p: { column: string; alias: string }[]) => void }) {
  const set = (i: number, k: 'column' | 'alias', v: string) => onChange(presets.map((p, j) => (j === i ? { ...p, [k]: v } : p)));
  return (
    <div class="preset-editor" data-testid="preset-filters">
      <h3 style={{ margin: '14px 0 6px' }}>Preset filters</h3>
      <p class="small muted" style={{ margin: '0 0 6px' }}>
        Columns a reader can filter every query panel by (at most {MAX_PRESETS}), with the label shown.
      </p>
      {presets.map((p, i) => (
        <div class="row" key={i} style={{ marginBottom: '4px' }}>
          <input aria-label={`Preset filter ${i + 1} column`} placeholder="column" value={p.column} onInput={(e) => set(i, 'column', (e.target as HTMLInputElement).value)} />
          <input aria-label={`Preset filter ${i + 1} label`} placeholder="label" value={p.alias} onInput={(e) => set(i, 'alias', (e.target as HTMLInputElement).value)} />
          <button class="icon" aria-label={`Remove preset filter ${p.column || i + 1}`} onClick={() => onChange(presets.filter((_, j) => j !== i))}>
            ✕
          </button>
        </div>
      ))}
      <button class="add" disabled={presets.length >= MAX_PRESETS} onClick={() => onChange([...presets, { column: '', alias: '' }])}>
        + Preset filter
      </button>
    </div>
  );
}

function EditCell(props: {
  item: Item;
  scope: Scope;
  onPanel: (p: BoardPanel) => void;
  onStartDrag: (e: PointerEvent, kind: 'move' | 'resize') => void;
  onKey: (e: KeyboardEvent) => void;
  onMove: (dx: number, dy: number) => void;
  onResize: (dw: number, dh: number) => void;
  onRemove: () => void;
}) {
  const { panel, rect: r } = props.item;
  const q = panel.query_panel;
  const chart = q?.visualization_settings?.charts?.[0];
  const setChart = (chart_type: string) =>
    props.onPanel({
      ...panel,
      query_panel: { ...q!, visualization_settings: { ...q!.visualization_settings, charts: [{ ...chart, chart_index: 0, chart_type }] } },
    });
  const label = panel.type === 'query' ? 'query panel' : panel.type === 'slo' ? 'SLO panel' : 'text panel';
  const btn = (text: string, title: string, onClick: () => void) => (
    <button class="icon" title={title} aria-label={`${title} (${label})`} onClick={onClick}>
      {text}
    </button>
  );
  return (
    <section
      class="panel board-panel edit-cell"
      style={{ gridColumn: `${r.x + 1} / span ${r.w}`, gridRow: `${r.y + 1} / span ${r.h}` }}
      data-panel-type={panel.type}
      data-position={`${r.x},${r.y},${r.w},${r.h}`}
    >
      <div class="edit-bar">
        <button
          class="icon handle"
          aria-label={`Move ${label}: drag, or arrow keys (Shift+arrows resize)`}
          title="Drag to move; arrow keys move, Shift+arrows resize"
          onPointerDown={(e) => props.onStartDrag(e, 'move')}
          onKeyDown={props.onKey}
        >
          ⠿
        </button>
        {btn('←', 'Move left', () => props.onMove(-1, 0))}
        {btn('→', 'Move right', () => props.onMove(1, 0))}
        {btn('↑', 'Move up', () => props.onMove(0, -1))}
        {btn('↓', 'Move down', () => props.onMove(0, 1))}
        <span class="sep" />
        {btn('⇤', 'Narrower', () => props.onResize(-1, 0))}
        {btn('⇥', 'Wider', () => props.onResize(1, 0))}
        {btn('⤒', 'Shorter', () => props.onResize(0, -1))}
        {btn('⤓', 'Taller', () => props.onResize(0, 1))}
        <span class="small muted mono" title="width × height" aria-live="polite">
          <span class="sr-only">
            {label} at column {r.x + 1}, row {r.y + 1}, size{' '}
          </span>
          {r.w}×{r.h}
        </span>
        <span class="spacer" />
        {q && (
          <>
            <select aria-label="Chart type" value={chart?.chart_type ?? 'default'} onChange={(e) => setChart((e.target as HTMLSelectElement).value)}>
              {CHART_TYPES.map(([v, t]) => (
                <option key={v} value={v}>
                  {t}
                </option>
              ))}
            </select>
            <PanelCompare p={q} onPanel={(query_panel) => props.onPanel({ ...panel, query_panel })} />
            <select
              aria-label="Query style"
              value={q.query_style ?? 'graph'}
              onChange={(e) => props.onPanel({ ...panel, query_panel: { ...q, query_style: (e.target as HTMLSelectElement).value } })}
            >
              {QUERY_STYLES.map(([v, t]) => (
                <option key={v} value={v}>
                  {t}
                </option>
              ))}
            </select>
          </>
        )}
        {btn('✕', 'Remove panel', props.onRemove)}
      </div>
      <div class="body">
        {q && <QueryPanel p={q} scope={props.scope} extra={[]} chartHeight={Math.max(90, r.h * 70 - 130)} />}
        {panel.slo_panel && <SloPanel id={panel.slo_panel.slo_id} scope={props.scope} />}
        {panel.text_panel && (
          <textarea
            aria-label="Markdown of the text panel"
            class="md-edit"
            value={panel.text_panel.content}
            maxLength={10000}
            onInput={(e) => props.onPanel({ ...panel, text_panel: { content: (e.target as HTMLTextAreaElement).value } })}
          />
        )}
      </div>
      <div class="resize-handle" aria-hidden="true" title="Drag to resize" onPointerDown={(e) => props.onStartDrag(e, 'resize')} />
    </section>
  );
}
