// The service map page's layout (web/src/service-map-layout.ts): columns by depth from the
// callers nobody calls, cycles placed, sizes and colours by traffic and error share.
import { describe, expect, it } from 'vitest';
import { edgeColor, edgeWidth, layoutServiceMap, COLUMN_GAP } from '../web/src/service-map-layout.js';

const col = (nodes: { name: string; x: number }[], name: string) => Math.round((nodes.find((n) => n.name === name)!.x - nodes[0].x) / COLUMN_GAP);

describe('service map layout', () => {
  it('puts callers left of what they call, by depth, and the busiest first in a column', () => {
    const { nodes } = layoutServiceMap([
      { parent: 'frontend', child: 'api', calls: 100, errors: 0 },
      { parent: 'api', child: 'db', calls: 80, errors: 0 },
      { parent: 'api', child: 'cache', calls: 300, errors: 0 },
      { parent: 'api', child: 'api', calls: 5, errors: 0 },
      { parent: 'worker', child: 'db', calls: 10, errors: 0 },
    ]);
    expect(Object.fromEntries(nodes.map((n) => [n.name, col(nodes, n.name)]))).toEqual({ frontend: 0, worker: 0, api: 1, db: 1, cache: 2 });
    const api = nodes.find((n) => n.name === 'api')!;
    const worker = nodes.find((n) => n.name === 'worker')!;
    expect(api.r).toBeGreaterThan(worker.r);
    // Column 0: frontend (100 calls) above worker (10).
    expect(nodes.find((n) => n.name === 'frontend')!.y).toBeLessThan(worker.y);
  });

  it('places a cycle that nobody enters from its busiest service', () => {
    const { nodes } = layoutServiceMap([
      { parent: 'a', child: 'b', calls: 1, errors: 0 },
      { parent: 'b', child: 'c', calls: 50, errors: 0 },
      { parent: 'c', child: 'a', calls: 1, errors: 0 },
    ]);
    expect(nodes.map((n) => n.name).sort()).toEqual(['a', 'b', 'c']);
    expect(col(nodes, 'b')).toBe(0);
    expect(col(nodes, 'c')).toBe(1);
    expect(col(nodes, 'a')).toBe(2);
  });

  it('draws busier edges wider and colours them by their error share', () => {
    expect(edgeWidth(100, 100)).toBeGreaterThan(edgeWidth(1, 100));
    expect(edgeColor({ parent: 'a', child: 'b', calls: 1000, errors: 0 })).toBe('#9aa3b2');
    expect(edgeColor({ parent: 'a', child: 'b', calls: 1000, errors: 20 })).toBe('#e8823a');
    expect(edgeColor({ parent: 'a', child: 'b', calls: 1000, errors: 200 })).toBe('#d9534f');
  });
});
