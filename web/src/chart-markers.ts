// Markers as the charts draw them: a dataset's own and the environment-wide ones (`__all__`), in
// their marker-setting colours. Boards ask for the same dataset's markers once per page load
// (a short-lived cache shared by their panels).
import { listMarkers } from './api/endpoints.js';
import type { ChartMarker } from './charts/line-chart.js';

const cache = new Map<string, { at: number; markers: Promise<ChartMarker[]> }>();
const TTL_MS = 15_000;

export function chartMarkers(dataset: string): Promise<ChartMarker[]> {
  const hit = cache.get(dataset);
  if (hit && Date.now() - hit.at < TTL_MS) return hit.markers;
  const markers = Promise.all([listMarkers(dataset), dataset === '__all__' ? Promise.resolve([]) : listMarkers('__all__')]).then((lists) =>
    lists.flat().map((m) => ({ time: m.start_time, end: m.end_time, color: m.color ?? '#888888', label: [m.type, m.message].filter(Boolean).join(': ') || 'marker' })),
  );
  cache.set(dataset, { at: Date.now(), markers });
  markers.catch(() => cache.delete(dataset));
  return markers;
}

/** Forgets the cached markers of a dataset (and the environment-wide ones): one was just made. */
export function forgetChartMarkers(dataset: string): void {
  if (dataset === '__all__') cache.clear();
  else cache.delete(dataset);
}
