// Colours of series: distinct, readable on both themes, stable per position.
export const SERIES_COLORS = [
  '#5b8def', '#e8823a', '#3fb27f', '#d9534f', '#9b6bdf', '#c7a72c', '#2bb3c0', '#e06ca6',
  '#7f8c3d', '#8c6d5a', '#4e79a7', '#f28e2b', '#59a14f', '#b07aa1', '#76b7b2', '#edc948',
];

export const seriesColor = (i: number) => SERIES_COLORS[i % SERIES_COLORS.length];

/** A CSS variable's value (theme colours for canvases). */
export function cssVar(name: string, fallback = '#888'): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
}
