// The board editor's grid (web/src/board-grid.ts): panels as rectangles on 12 columns that never
// overlap; moves and resizes push the panels in the way down and pack every panel up; the
// keyboard's arrows can take a panel anywhere; a new panel goes to the first free place.
import { describe, expect, it } from 'vitest';
import { cellsMoved, compact, firstFree, isValidLayout, moveBy, moveTo, rectOf, resizeBy, resizeTo, settle, type Rect } from '../web/src/board-grid.js';

const R = (x: number, y: number, w: number, h: number): Rect => ({ x, y, w, h });
// Two query panels side by side, a text panel below the first.
const board = () => [R(0, 0, 6, 6), R(6, 0, 6, 6), R(0, 6, 6, 4)];

describe('board grid', () => {
  it('reads positions as the board page draws them: 0 sizes are the defaults, kept inside 12 columns', () => {
    expect(rectOf('query', { x_coordinate: 0, y_coordinate: 0, width: 0, height: 0 })).toEqual(R(0, 0, 6, 6));
    expect(rectOf('text', undefined)).toEqual(R(0, 0, 6, 4));
    expect(rectOf('slo', { x_coordinate: 10, y_coordinate: 3, width: 4, height: 5 })).toEqual(R(8, 3, 4, 5));
  });

  it('moves a panel sideways and down, pushing the panels in its way and packing them up', () => {
    // The text panel moved right, under the second query panel.
    expect(moveBy(board(), 2, 6, 0)).toEqual([R(0, 0, 6, 6), R(6, 0, 6, 6), R(6, 6, 6, 4)]);
    // The first panel moved one column right: it overlaps the second, which goes below it; the text panel stays put.
    const moved = moveBy(board(), 0, 1, 0);
    expect(moved[0]).toEqual(R(1, 0, 6, 6));
    expect(moved[1].y).toBeGreaterThanOrEqual(6);
    expect(isValidLayout(moved)).toBe(true);
    // A move left at column 0 stays at column 0; right stops at the last column that fits.
    expect(moveBy(board(), 0, -1, 0)).toEqual(board());
    expect(moveBy(board(), 1, 1, 0)).toEqual(board());
  });

  it('up swaps places with the panel above; down jumps below the panel under it', () => {
    expect(moveBy(board(), 2, 0, -1)).toEqual([R(0, 4, 6, 6), R(6, 0, 6, 6), R(0, 0, 6, 4)]);
    expect(moveBy(board(), 0, 0, 1)).toEqual([R(0, 4, 6, 6), R(6, 0, 6, 6), R(0, 0, 6, 4)]);
    // Nothing below: the panel stays where it is (panels sit as high as they can).
    expect(moveBy(board(), 1, 0, 1)).toEqual(board());
  });

  it('drops a dragged panel onto another: it takes that place and the other moves down', () => {
    const out = moveTo(board(), 2, 6, 2);
    expect(out[2]).toEqual(R(6, 0, 6, 4));
    expect(out[1]).toEqual(R(6, 4, 6, 6));
    expect(isValidLayout(out)).toBe(true);
  });

  it('resizes within the columns and 2…24 rows, pushing what it grows into', () => {
    const wide = resizeBy(board(), 0, 6, 0);
    expect(wide[0]).toEqual(R(0, 0, 12, 6));
    expect(wide[1]).toEqual(R(6, 6, 6, 6));
    expect(wide[2]).toEqual(R(0, 6, 6, 4));
    expect(resizeBy(board(), 1, 3, 0)[1].w).toBe(6);
    expect(resizeTo(board(), 2, 1, 1)[2]).toEqual(R(0, 6, 2, 2));
    expect(resizeTo(board(), 2, 6, 40)[2].h).toBe(24);
    const tall = resizeBy(board(), 0, 0, 2);
    expect(tall[2]).toEqual(R(0, 8, 6, 4));
    // Shorter: the panel below moves up.
    expect(resizeBy(board(), 0, 0, -2)[2]).toEqual(R(0, 4, 6, 4));
  });

  it('keeps every layout free of overlaps whatever is done', () => {
    let rects = [...board(), R(0, 10, 12, 3), R(3, 13, 4, 5)];
    const ops = [
      (r: Rect[]) => moveBy(r, 3, 0, -1), (r: Rect[]) => resizeBy(r, 4, 5, 2), (r: Rect[]) => moveBy(r, 0, 3, 1),
      (r: Rect[]) => moveTo(r, 1, 0, 0), (r: Rect[]) => resizeBy(r, 2, 6, -1), (r: Rect[]) => moveBy(r, 4, -2, -1),
    ];
    for (let round = 0; round < 4; round++) for (const op of ops) {
      rects = op(rects);
      expect(isValidLayout(rects)).toBe(true);
    }
  });

  it('settles overlapping positions from the API and packs empty rows', () => {
    const s = settle([R(0, 0, 6, 6), R(3, 2, 6, 6)]);
    expect(s[1]).toEqual(R(3, 6, 6, 6));
    expect(compact([R(0, 5, 6, 6), R(6, 20, 6, 2)])).toEqual([R(0, 0, 6, 6), R(6, 0, 6, 2)]);
  });

  it('puts a new panel in the first free place', () => {
    expect(firstFree([], 6, 4)).toEqual(R(0, 0, 6, 4));
    expect(firstFree([R(0, 0, 6, 6)], 6, 4)).toEqual(R(6, 0, 6, 4));
    expect(firstFree(board(), 6, 4)).toEqual(R(6, 6, 6, 4));
    expect(firstFree(board(), 12, 4)).toEqual(R(0, 10, 12, 4));
  });

  it('turns a drag in pixels into cells', () => {
    // 1200 px wide, 12 columns with 14 px gaps: a column is ~101 px; a row 56 + 14.
    expect(cellsMoved(205, 140, 1200, 56, 14)).toEqual({ dx: 2, dy: 2 });
    expect(cellsMoved(-40, 30, 1200, 56, 14)).toEqual({ dx: 0, dy: 0 });
  });
});
