// The UI's addresses, parsed and built in one place. They follow Honeycomb's, so the links
// Waggle's API hands out open here: `links.query_url` is
// `/<team>/environments/<env>/datasets/<dataset>/result/<id>` and `links.board_url`
// `/<team>/environments/<env>/board/<id>`; notifications link to a trigger's page,
// `/<team>/environments/<env>/datasets/<dataset>/triggers/<id>`.
export interface Scope {
  team: string;
  env: string;
}

export type Route =
  | { page: 'login' }
  | { page: 'root' }
  | ({ page: 'home' } & Scope)
  | ({ page: 'query'; dataset: string; resultId?: string } & Scope)
  | ({ page: 'trace'; dataset: string; traceId: string } & Scope)
  | ({ page: 'trace-compare'; dataset: string; traceId: string; otherId: string } & Scope)
  | ({ page: 'events'; dataset: string } & Scope)
  | ({ page: 'dataset-settings'; dataset: string } & Scope)
  | ({ page: 'boards' } & Scope)
  | ({ page: 'board'; boardId: string } & Scope)
  | ({ page: 'slos' } & Scope)
  | ({ page: 'slo'; dataset: string; sloId: string } & Scope)
  | ({ page: 'triggers' } & Scope)
  | ({ page: 'trigger'; dataset: string; triggerId: string } & Scope)
  | ({ page: 'recipients' } & Scope)
  | ({ page: 'service-map' } & Scope)
  | { page: 'notfound' };

const d = (s: string) => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};
const e = encodeURIComponent;

/** The route of a path (without the server's base path). */
export function parseRoute(pathname: string): Route {
  const parts = pathname.split('/').filter(Boolean).map(d);
  if (parts.length === 0) return { page: 'root' };
  if (parts.length === 1 && parts[0] === 'login') return { page: 'login' };
  if (parts.length < 3 || parts[1] !== 'environments') return { page: 'notfound' };
  const scope = { team: parts[0], env: parts[2] };
  const rest = parts.slice(3);
  const [a, b, c, x, y, z] = rest;
  if (rest.length === 0) return { page: 'home', ...scope };
  if (rest.length === 1 && ['boards', 'slos', 'triggers', 'recipients', 'service-map'].includes(a)) return { page: a as 'boards', ...scope };
  if (a === 'board' && rest.length === 2) return { page: 'board', boardId: b, ...scope };
  if (a === 'datasets' && b !== undefined) {
    if (rest.length === 2) return { page: 'query', dataset: b, ...scope };
    if (c === 'result' && x !== undefined && rest.length === 4) return { page: 'query', dataset: b, resultId: x, ...scope };
    if (c === 'trace' && x !== undefined && rest.length === 4) return { page: 'trace', dataset: b, traceId: x, ...scope };
    if (c === 'trace' && y === 'compare' && rest.length === 6) return { page: 'trace-compare', dataset: b, traceId: x, otherId: z, ...scope };
    if (c === 'slo' && x !== undefined && rest.length === 4) return { page: 'slo', dataset: b, sloId: x, ...scope };
    if (c === 'triggers' && x !== undefined && rest.length === 4) return { page: 'trigger', dataset: b, triggerId: x, ...scope };
    if (c === 'events' && rest.length === 3) return { page: 'events', dataset: b, ...scope };
    if (c === 'settings' && rest.length === 3) return { page: 'dataset-settings', dataset: b, ...scope };
  }
  return { page: 'notfound' };
}

/** The path of a route (without the server's base path). */
export function pathOf(r: Route): string {
  if (r.page === 'login') return '/login';
  if (r.page === 'root' || r.page === 'notfound') return '/';
  const s = `/${e(r.team)}/environments/${e(r.env)}`;
  switch (r.page) {
    case 'home':
      return s;
    case 'boards':
    case 'slos':
    case 'triggers':
    case 'recipients':
    case 'service-map':
      return `${s}/${r.page}`;
    case 'board':
      return `${s}/board/${e(r.boardId)}`;
    case 'query':
      return `${s}/datasets/${e(r.dataset)}${r.resultId ? `/result/${e(r.resultId)}` : ''}`;
    case 'trace':
      return `${s}/datasets/${e(r.dataset)}/trace/${e(r.traceId)}`;
    case 'trace-compare':
      return `${s}/datasets/${e(r.dataset)}/trace/${e(r.traceId)}/compare/${e(r.otherId)}`;
    case 'events':
      return `${s}/datasets/${e(r.dataset)}/events`;
    case 'dataset-settings':
      return `${s}/datasets/${e(r.dataset)}/settings`;
    case 'slo':
      return `${s}/datasets/${e(r.dataset)}/slo/${e(r.sloId)}`;
    case 'trigger':
      return `${s}/datasets/${e(r.dataset)}/triggers/${e(r.triggerId)}`;
  }
}
