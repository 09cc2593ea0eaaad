// Where each service of a service map is drawn: services in columns by their depth from the
// callers that nobody calls (a cycle with no such caller starts at its busiest service), each
// column ordered by traffic; a node's size grows with the calls it receives and makes, an edge's
// width with its calls, and its colour with the share of those calls that are errors.

export interface MapEdge {
  parent: string;
  child: string;
  calls: number;
  errors: number;
}
export interface PlacedNode {
  name: string;
  x: number;
  y: number;
  r: number;
  traffic: number;
}

export const COLUMN_GAP = 220;
export const ROW_GAP = 90;
const MARGIN = 70;

/** Columns by breadth-first depth; self-calls do not count. */
export function layoutServiceMap(edges: MapEdge[]): { nodes: PlacedNode[]; width: number; height: number } {
  const traffic = new Map<string, number>();
  const out = new Map<string, string[]>();
  const incoming = new Map<string, number>();
  for (const e of edges) {
    for (const n of [e.parent, e.child]) {
      if (!traffic.has(n)) traffic.set(n, 0);
      if (!out.has(n)) out.set(n, []);
      if (!incoming.has(n)) incoming.set(n, 0);
    }
    traffic.set(e.parent, traffic.get(e.parent)! + e.calls);
    if (e.parent !== e.child) {
      traffic.set(e.child, traffic.get(e.child)! + e.calls);
      out.get(e.parent)!.push(e.child);
      incoming.set(e.child, incoming.get(e.child)! + 1);
    }
  }
  const byTraffic = (a: string, b: string) => traffic.get(b)! - traffic.get(a)! || (a < b ? -1 : a > b ? 1 : 0);
  const depth = new Map<string, number>();
  const visit = (starts: string[]) => {
    const queue = starts.filter((s) => !depth.has(s));
    for (const s of queue) depth.set(s, 0);
    while (queue.length > 0) {
      const n = queue.shift()!;
      for (const c of out.get(n) ?? []) {
        if (depth.has(c)) continue;
        depth.set(c, depth.get(n)! + 1);
        queue.push(c);
      }
    }
  };
  visit([...traffic.keys()].filter((n) => incoming.get(n) === 0).sort(byTraffic));
  // Services only reachable through a cycle: start from the busiest one left.
  for (let left = [...traffic.keys()].filter((n) => !depth.has(n)); left.length > 0; left = left.filter((n) => !depth.has(n))) {
    visit([left.sort(byTraffic)[0]]);
  }
  const columns: string[][] = [];
  for (const [n, d] of depth) (columns[d] ??= []).push(n);
  const most = Math.max(1, ...traffic.values());
  const nodes: PlacedNode[] = [];
  columns.forEach((col, ci) => {
    col.sort(byTraffic).forEach((n, ri) => {
      const t = traffic.get(n)!;
      nodes.push({ name: n, x: MARGIN + ci * COLUMN_GAP, y: MARGIN + ri * ROW_GAP, r: 10 + 18 * Math.sqrt(t / most), traffic: t });
    });
  });
  const rows = Math.max(1, ...columns.map((c) => c.length));
  return { nodes, width: MARGIN * 2 + (columns.length - 1) * COLUMN_GAP, height: MARGIN * 2 + (rows - 1) * ROW_GAP };
}

/** An edge's stroke width: 1.5 px for the quietest, up to 9 for the busiest. */
export const edgeWidth = (calls: number, most: number) => 1.5 + 7.5 * Math.sqrt(calls / Math.max(1, most));

/** An edge's colour: grey without errors, orange from 1 %, red from 10 % of its calls. */
export function edgeColor(e: MapEdge): string {
  const share = e.calls > 0 ? e.errors / e.calls : 0;
  return share >= 0.1 ? '#d9534f' : share >= 0.01 ? '#e8823a' : '#9aa3b2';
}
