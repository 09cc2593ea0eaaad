// The frame of every signed-in page: navigation, the team and environment, sign-out.
import type { ComponentChildren } from 'preact';
import { Link } from '../router.js';
import { pathOf, type Route, type Scope } from '../routes.js';
import { useSession } from '../session.js';

const LOGO = (
  <svg viewBox="0 0 32 32" aria-hidden="true">
    <path fill="#f5a623" d="M16 2l12 7v14l-12 7-12-7V9z" />
    <path fill="#1f2330" d="M10 12h3l3 8 3-8h3l-5 11h-2z" />
  </svg>
);

export function Shell({ route, scope, children }: { route: Route; scope: Scope; children: ComponentChildren }) {
  const { session, signOut } = useSession();
  const items: { label: string; route: Route; match: string[] }[] = [
    { label: 'Home', route: { page: 'home', ...scope }, match: ['home'] },
    { label: 'Query', route: { page: 'query', dataset: '__all__', ...scope }, match: ['query', 'events'] },
    { label: 'Boards', route: { page: 'boards', ...scope }, match: ['boards', 'board'] },
    { label: 'SLOs', route: { page: 'slos', ...scope }, match: ['slos', 'slo'] },
    { label: 'Service map', route: { page: 'service-map', ...scope }, match: ['service-map'] },
    { label: 'Triggers & markers', route: { page: 'triggers', ...scope }, match: ['triggers', 'trigger'] },
    { label: 'Recipients', route: { page: 'recipients', ...scope }, match: ['recipients'] },
  ];
  return (
    <div class="shell">
      <nav class="nav" aria-label="Main">
        <Link class="brand" href={pathOf({ page: 'home', ...scope })}>
          {LOGO}
          Waggle
        </Link>
        <div class="scope" aria-label="Signed in to">
          <span class="muted">{session.team.name}</span>
          <strong data-testid="environment">{session.environment.name}</strong>
        </div>
        {items.map((it) => (
          <Link key={it.label} class="item" href={pathOf(it.route)} aria-current={it.match.includes(route.page) ? 'page' : undefined}>
            {it.label}
          </Link>
        ))}
        <div class="bottom">
          <button class="ghost" onClick={() => void signOut()}>
            Sign out
          </button>
        </div>
      </nav>
      <main id="main">{children}</main>
    </div>
  );
}
