// Client-side navigation: the History API, a hook for the current location, and a Link that
// navigates without reloading (and still opens in a new tab with a modifier key).
import { h, type ComponentChildren, type JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { BASE } from './api/client.js';

const listeners = new Set<() => void>();
window.addEventListener('popstate', () => listeners.forEach((f) => f()));

export interface Location {
  path: string;
  search: URLSearchParams;
}

export function currentLocation(): Location {
  const path = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) || '/' : location.pathname;
  return { path, search: new URLSearchParams(location.search) };
}

/** Goes to `to` (a path with an optional query, without the base path). */
export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  const url = `${BASE}${to}`;
  if (url === location.pathname + location.search) return;
  if (opts.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  listeners.forEach((f) => f());
  if (!opts.replace) window.scrollTo(0, 0);
}

export function useLocation(): Location {
  const [loc, setLoc] = useState(currentLocation);
  useEffect(() => {
    const update = () => setLoc(currentLocation());
    listeners.add(update);
    return () => void listeners.delete(update);
  }, []);
  return loc;
}

export function Link(props: { href: string; children: ComponentChildren } & Omit<JSX.HTMLAttributes<HTMLAnchorElement>, 'href'>) {
  const { href, children, ...rest } = props;
  const onClick = (ev: MouseEvent) => {
    if (ev.defaultPrevented || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
    ev.preventDefault();
    navigate(href);
  };
  return h('a', { ...rest, href: `${BASE}${href}`, onClick }, children);
}
