// Sign-in: a configuration key, checked by the server, which keeps the session in an HttpOnly
// cookie (the key is never stored in the browser).
import { useState } from 'preact/hooks';
import { signIn } from '../api/endpoints.js';
import type { SignedIn } from '../api/types.js';

export function LoginPage({ onSignedIn }: { onSignedIn: (s: SignedIn) => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (ev: Event) => {
    ev.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const s = await signIn(key.trim());
      setKey('');
      onSignedIn(s);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="signin">
      <main class="panel">
        <div class="row">
          <svg viewBox="0 0 32 32" width="32" height="32" aria-hidden="true">
            <path fill="#f5a623" d="M16 2l12 7v14l-12 7-12-7V9z" />
            <path fill="#1f2330" d="M10 12h3l3 8 3-8h3l-5 11h-2z" />
          </svg>
          <h1>Sign in to Waggle</h1>
        </div>
        <form onSubmit={submit}>
          <label class="field" for="key">
            Configuration key
            <input
              id="key"
              name="key"
              type="password"
              autoComplete="current-password"
              required
              value={key}
              onInput={(e) => setKey((e.target as HTMLInputElement).value)}
              aria-describedby="key-help"
              aria-invalid={error ? 'true' : undefined}
            />
          </label>
          <div id="key-help" class="small muted">
            The key <code>waggle serve</code> printed on its first start (or one made with <code>waggle keys create</code>). It stays on the
            server: your browser keeps only a session cookie.
          </div>
          {error && (
            <div class="notice error" role="alert">
              {error}
            </div>
          )}
          <button class="primary" type="submit" disabled={busy || key.trim() === ''}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
        </form>
      </main>
    </div>
  );
}
