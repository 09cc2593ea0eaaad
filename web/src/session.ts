// Who is signed in, for every component (a Preact context filled by the app).
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Dataset, SignedIn } from './api/types.js';

export interface SessionState {
  session: SignedIn;
  /** The environment's datasets (loaded once, reloaded on demand). */
  datasets: Dataset[] | undefined;
  reloadDatasets: () => void;
  signOut: () => Promise<void>;
}

export const SessionContext = createContext<SessionState | null>(null);

export function useSession(): SessionState {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside a signed-in page');
  return s;
}
