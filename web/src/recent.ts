// The queries recently run in this browser, per environment (kept in localStorage: query specs
// and result ids only, never a key).
import type { QuerySpec } from './api/types.js';
import type { Scope } from './routes.js';

export interface RecentQuery {
  dataset: string;
  resultId: string;
  spec: QuerySpec;
  at: number;
}

const MAX = 20;
const keyOf = (s: Scope) => `waggle.recent.${s.team}.${s.env}`;

export function listRecent(scope: Scope): RecentQuery[] {
  try {
    const v = JSON.parse(localStorage.getItem(keyOf(scope)) ?? '[]');
    return Array.isArray(v) ? v : [];
  } catch {
    return [];
  }
}

export function addRecent(scope: Scope, q: RecentQuery): void {
  const list = [q, ...listRecent(scope).filter((r) => r.resultId !== q.resultId)].slice(0, MAX);
  try {
    localStorage.setItem(keyOf(scope), JSON.stringify(list));
  } catch {
    // storage full or disabled: history is a convenience
  }
}
