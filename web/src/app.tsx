// The app: who is signed in, which page the address names, and the frame around it.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { onUnauthenticated } from './api/client.js';
import { listDatasets, signOut as apiSignOut, whoAmI } from './api/endpoints.js';
import type { Dataset, SignedIn } from './api/types.js';
import { Shell } from './components/layout.js';
import { Spinner } from './components/ui.js';
import { BoardPage } from './pages/board.js';
import { BoardsPage } from './pages/boards.js';
import { DatasetSettingsPage } from './pages/dataset-settings.js';
import { EventsPage } from './pages/events.js';
import { HomePage } from './pages/home.js';
import { LoginPage } from './pages/login.js';
import { QueryPage } from './pages/query.js';
import { RecipientsPage } from './pages/recipients.js';
import { ServiceMapPage } from './pages/service-map.js';
import { SloPage } from './pages/slo.js';
import { SlosPage } from './pages/slos.js';
import { TracePage } from './pages/trace.js';
import { TraceComparePage } from './pages/trace-compare.js';
import { TriggersPage } from './pages/triggers.js';
import { TriggerPage } from './pages/trigger.js';
import { navigate, useLocation } from './router.js';
import { parseRoute, pathOf, type Route, type Scope } from './routes.js';
import { SessionContext } from './session.js';

export function App() {
  const loc = useLocation();
  const route = parseRoute(loc.path);
  const [session, setSession] = useState<SignedIn | null | undefined>(undefined);
  const [datasets, setDatasets] = useState<Dataset[] | undefined>(undefined);

  useEffect(() => {
    whoAmI().then(
      (s) => setSession(s),
      () => setSession(null),
    );
    return onUnauthenticated(() => setSession(null));
  }, []);
  const reloadDatasets = useCallback(() => {
    listDatasets().then(setDatasets, () => setDatasets([]));
  }, []);
  useEffect(() => {
    if (session) reloadDatasets();
  }, [session, reloadDatasets]);

  // Signed out: the sign-in page, then back where the person was going.
  useEffect(() => {
    if (session === null && route.page !== 'login') {
      const next = loc.path + (loc.search.toString() ? `?${loc.search}` : '');
      navigate(`/login${next !== '/' ? `?next=${encodeURIComponent(next)}` : ''}`, { replace: true });
    }
  }, [session, route.page]);

  if (session === undefined) return <div class="signin"><Spinner /></div>;
  if (session === null || route.page === 'login') {
    if (session && route.page === 'login') {
      queueMicrotask(() => navigate(safeNext(loc.search.get('next')) ?? pathOf({ page: 'home', team: session.team.slug, env: session.environment.slug }), { replace: true }));
      return null;
    }
    return (
      <LoginPage
        onSignedIn={(s) => {
          setSession(s);
          navigate(safeNext(loc.search.get('next')) ?? pathOf({ page: 'home', team: s.team.slug, env: s.environment.slug }), { replace: true });
        }}
      />
    );
  }
  const home: Scope = { team: session.team.slug, env: session.environment.slug };
  if (route.page === 'root') {
    queueMicrotask(() => navigate(pathOf({ page: 'home', ...home }), { replace: true }));
    return null;
  }
  const signOut = async () => {
    try {
      await apiSignOut();
    } finally {
      setSession(null);
      navigate('/login', { replace: true });
    }
  };
  const state = { session, datasets, reloadDatasets, signOut };
  return (
    <SessionContext.Provider value={state}>
      <Shell route={route} scope={home}>
        <Page route={route} home={home} />
      </Shell>
    </SessionContext.Provider>
  );
}

/** Only paths of this app (never another site) as the place to return to after signing in. */
function safeNext(next: string | null): string | undefined {
  return next && next.startsWith('/') && !next.startsWith('//') ? next : undefined;
}

function Page({ route, home }: { route: Route; home: Scope }) {
  if (route.page === 'notfound' || route.page === 'login' || route.page === 'root') {
    return <div class="empty"><h1>Page not found</h1><p>There is nothing at this address.</p></div>;
  }
  if (route.team !== home.team || route.env !== home.env) {
    return (
      <div class="notice error" role="alert">
        This page belongs to environment <strong>{route.env}</strong> of team <strong>{route.team}</strong>, but you are signed in to{' '}
        <strong>{home.env}</strong> of <strong>{home.team}</strong>. Sign out and sign in with a key of that environment to open it.
      </div>
    );
  }
  switch (route.page) {
    case 'home':
      return <HomePage scope={home} />;
    case 'query':
      return <QueryPage key={`${route.dataset}/${route.resultId ?? ''}`} scope={home} dataset={route.dataset} resultId={route.resultId} />;
    case 'events':
      return <EventsPage scope={home} dataset={route.dataset} />;
    case 'dataset-settings':
      return <DatasetSettingsPage scope={home} dataset={route.dataset} />;
    case 'trace':
      return <TracePage scope={home} dataset={route.dataset} traceId={route.traceId} />;
    case 'trace-compare':
      return <TraceComparePage scope={home} dataset={route.dataset} traceId={route.traceId} otherId={route.otherId} />;
    case 'boards':
      return <BoardsPage scope={home} />;
    case 'board':
      return <BoardPage scope={home} boardId={route.boardId} />;
    case 'slos':
      return <SlosPage scope={home} />;
    case 'slo':
      return <SloPage scope={home} dataset={route.dataset} sloId={route.sloId} />;
    case 'triggers':
      return <TriggersPage scope={home} />;
    case 'trigger':
      return <TriggerPage key={route.triggerId} scope={home} dataset={route.dataset} triggerId={route.triggerId} />;
    case 'recipients':
      return <RecipientsPage scope={home} />;
    case 'service-map':
      return <ServiceMapPage scope={home} />;
  }
}
