// Pure rules of the board editor's grid: 12 columns, rows of one unit, panels as rectangles that
// never overlap. A panel moved or resized onto others pushes them down (and they push the ones
// below them), so every arrangement the editor makes is one the board page draws as placed.
// Sizes the server left at 0 ("size automatically") count as the grid's defaults (6 wide, 6 high
// for query and SLO panels, 4 for text), as the board page draws them.

export const COLUMNS = 12;
export const MIN_WIDTH = 2;
export const MIN_HEIGHT = 2;
export const MAX_HEIGHT = 24;
export const DEFAULT_WIDTH = 6;
export const DEFAULT_HEIGHT = { query: 6, slo: 6, text: 4 } as const;

export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}
export interface Position {
  x_coordinate: number;
  y_coordinate: number;
  width: number;
  height: number;
}
export type PanelType = keyof typeof DEFAULT_HEIGHT;

const clamp = (v: number, lo: number, hi: number) => Math.max(lo, Math.min(hi, v));

/** A panel's rectangle on the grid (its position as the board page draws it). */
export function rectOf(type: PanelType, pos: Partial<Position> | undefined): Rect {
  const w = clamp(pos?.width || DEFAULT_WIDTH, 1, COLUMNS);
  return {
    x: clamp(pos?.x_coordinate ?? 0, 0, COLUMNS - w),
    y: Math.max(0, pos?.y_coordinate ?? 0),
    w,
    h: pos?.height || DEFAULT_HEIGHT[type],
  };
}

export const positionOf = (r: Rect): Position => ({ x_coordinate: r.x, y_coordinate: r.y, width: r.w, height: r.h });

export const overlaps = (a: Rect, b: Rect) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

/** The indexes of the panels `rects[i]` overlaps. */
export const collisions = (rects: Rect[], i: number) => rects.flatMap((r, j) => (j !== i && overlaps(rects[i], r) ? [j] : []));

/** Whether no two panels overlap. */
export const isValidLayout = (rects: Rect[]) => rects.every((_, i) => collisions(rects, i).length === 0);

/**
 * Resolves overlaps after panel `fixed` moved or changed size: the other panels, top to bottom,
 * each move down until it overlaps neither `fixed` nor any panel already settled. Returns new
 * rectangles; `rects` is left as it was.
 */
export function pushDown(rects: Rect[], fixed: number): Rect[] {
  const out = rects.map((r) => ({ ...r }));
  const placed = fixed >= 0 ? [fixed] : [];
  const order = rects.map((_, i) => i).filter((i) => i !== fixed).sort((a, b) => rects[a].y - rects[b].y || rects[a].x - rects[b].x);
  for (const i of order) {
    for (;;) {
      const hit = placed.find((j) => overlaps(out[i], out[j]));
      if (hit === undefined) break;
      out[i].y = out[hit].y + out[hit].h;
    }
    placed.push(i);
  }
  return out;
}

/** Overlapping panels (a board made through the API may have them) moved down until none overlaps. */
export const settle = (rects: Rect[]) => (isValidLayout(rects) ? rects : pushDown(rects, -1));

/** Empty rows removed: every panel moved up as far as it goes without overlapping (top to bottom). */
export function compact(rects: Rect[]): Rect[] {
  const order = rects.map((_, i) => i).sort((a, b) => rects[a].y - rects[b].y || rects[a].x - rects[b].x);
  const out = rects.map((r) => ({ ...r }));
  const placed: number[] = [];
  for (const i of order) {
    while (out[i].y > 0 && !placed.some((j) => overlaps({ ...out[i], y: out[i].y - 1 }, out[j]))) out[i].y -= 1;
    placed.push(i);
  }
  return out;
}

/**
 * Panel `i` placed at (x, y) (kept inside the 12 columns), the panels in its way pushed down, then
 * every panel moved up as far as it goes: dropped onto another panel, it takes that panel's place.
 */
export function moveTo(rects: Rect[], i: number, x: number, y: number): Rect[] {
  const r = rects[i];
  const next = rects.map((o, j) => (j === i ? { ...o, x: clamp(Math.round(x), 0, COLUMNS - r.w), y: Math.max(0, Math.round(y)) } : o));
  return compact(pushDown(next, i));
}

/**
 * Panel `i` moved by (dx, dy) cells (the keyboard's arrows). Up swaps places with the panel above;
 * down jumps below the panels it would run into (which then move up into its place), so the
 * arrows can take a panel anywhere although every panel sits as high as it can.
 */
export function moveBy(rects: Rect[], i: number, dx: number, dy: number): Rect[] {
  const r = rects[i];
  if (dy > 0) {
    const target = { ...r, x: clamp(r.x + dx, 0, COLUMNS - r.w), y: r.y + dy };
    const below = rects.filter((o, j) => j !== i && o.y >= r.y + r.h && overlaps(target, o));
    if (below.length > 0) return moveTo(rects, i, target.x, Math.max(...below.map((o) => o.y + o.h)));
  }
  return moveTo(rects, i, r.x + dx, r.y + dy);
}

/** Panel `i` resized to w × h (width 2…12 and within the columns from its x, height 2…24); the others pushed down, then packed up. */
export function resizeTo(rects: Rect[], i: number, w: number, h: number): Rect[] {
  const r = rects[i];
  const width = clamp(Math.round(w), Math.min(MIN_WIDTH, COLUMNS - r.x), COLUMNS - r.x);
  const next = rects.map((o, j) => (j === i ? { ...o, w: width, h: clamp(Math.round(h), MIN_HEIGHT, MAX_HEIGHT) } : o));
  return compact(pushDown(next, i));
}

export const resizeBy = (rects: Rect[], i: number, dw: number, dh: number) => resizeTo(rects, i, rects[i].w + dw, rects[i].h + dh);

/** Where a new w × h panel goes: the first free place, row by row from the top, left to right. */
export function firstFree(rects: Rect[], w: number, h: number): Rect {
  const width = clamp(w, 1, COLUMNS);
  const bottom = rects.reduce((m, r) => Math.max(m, r.y + r.h), 0);
  for (let y = 0; y <= bottom; y++) {
    for (let x = 0; x + width <= COLUMNS; x++) {
      const c = { x, y, w: width, h };
      if (!rects.some((r) => overlaps(c, r))) return c;
    }
  }
  return { x: 0, y: bottom, w: width, h };
}

/** Cells a pointer moved across: `dx`, `dy` pixels on a grid `gridWidth` wide with rows `rowPx` tall and `gap` between cells. */
export function cellsMoved(dx: number, dy: number, gridWidth: number, rowPx: number, gap: number): { dx: number; dy: number } {
  const col = (gridWidth + gap) / COLUMNS;
  return { dx: Math.round(dx / col) || 0, dy: Math.round(dy / (rowPx + gap)) || 0 };
}
