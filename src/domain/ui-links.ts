// The web UI's addresses the server hands out (web/src/routes.ts parses the same): a query
// result's page (`links.query_url`), its chart as an image (`links.graph_image_url`), a trigger's
// page and an SLO's page (the links in notifications). Paths only: the caller puts the server's
// public base URL in front (src/http/public-url.ts for answers, `backgroundBaseUrl` in
// settings.ts for notifications).
import { randomString } from './ids.js';

const e = encodeURIComponent;

/** `/<team>/environments/<env>`: every page of an environment starts with it. */
export const environmentPath = (team: string, env: string) => `/${e(team)}/environments/${e(env)}`;

/** A stored query result's page: the UI opens the query on exactly that result. */
export const resultPagePath = (team: string, env: string, dataset: string, resultId: string) =>
  `${environmentPath(team, env)}/datasets/${e(dataset)}/result/${e(resultId)}`;

/** The result's chart as a PNG, readable without a session by whoever holds the URL (its token). */
export const graphImagePath = (team: string, env: string, dataset: string, resultId: string, token: string) =>
  `${resultPagePath(team, env, dataset, resultId)}/snapshot/${e(token)}`;

/** A trigger's page (`dataset` is `__all__` for an environment-wide trigger). */
export const triggerPagePath = (team: string, env: string, dataset: string, triggerId: string) =>
  `${environmentPath(team, env)}/datasets/${e(dataset)}/triggers/${e(triggerId)}`;

/** An SLO's page (`dataset` is `__all__` for an environment-wide SLO). */
export const sloPagePath = (team: string, env: string, dataset: string, sloId: string) =>
  `${environmentPath(team, env)}/datasets/${e(dataset)}/slo/${e(sloId)}`;

/** A graph image token: 32 alphanumerics (190 bits), unguessable. */
export const newImageToken = () => randomString(32);
/** What a graph image token looks like (anything else is a 404 without a lookup). */
export const IMAGE_TOKEN = /^[A-Za-z0-9]{32}$/;
