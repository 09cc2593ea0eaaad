// Making a trigger from a query, or editing one: its name, the calculation it watches (one of the
// query's, not HEATMAP or CONCURRENCY), the threshold (drawn on the query's chart as it is
// edited: `onThreshold`), how often it runs and over what window, when it notifies, its
// recipients, and whether it is on. Saves with POST /1/triggers/<dataset> (the query inline) or
// a full-replacement PUT; problems the API reports are shown by their fields.
import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../api/client.js';
import { createTrigger, listRecipients, updateTrigger } from '../api/endpoints.js';
import { calculationKey, type QuerySpec, type Recipient, type Trigger } from '../api/types.js';
import { recipientSummary } from '../pages/recipients.js';
import { ErrorNotice } from './ui.js';

const OPS = ['>', '>=', '<', '<='] as const;
const FREQUENCIES: [string, number][] = [['1 minute', 60], ['5 minutes', 300], ['15 minutes', 900], ['30 minutes', 1800], ['1 hour', 3600], ['6 hours', 21_600], ['1 day', 86_400]];
const NOT_WATCHABLE = new Set(['HEATMAP', 'CONCURRENCY']);
/** A trigger's fields an edit keeps as they are. */
const KEPT = ['tags', 'evaluation_schedule_type', 'evaluation_schedule', 'baseline_details', 'auto_investigate'];

/** The calculations of a query a trigger can watch. */
export const watchable = (spec: QuerySpec) => (spec.calculations?.length ? spec.calculations : [{ op: 'COUNT' as const }]).filter((c) => !NOT_WATCHABLE.has(c.op));

/** The trigger's query: the one calculation it watches, the query's filters and breakdowns, over `range` seconds. */
export function triggerQuery(spec: QuerySpec, calcKey: string, range: number): QuerySpec {
  const calc = watchable(spec).find((c) => calculationKey(c) === calcKey) ?? watchable(spec)[0];
  return {
    calculations: [calc],
    ...(spec.filters?.length ? { filters: spec.filters } : {}),
    ...(spec.filter_combination ? { filter_combination: spec.filter_combination } : {}),
    ...(spec.breakdowns?.length ? { breakdowns: spec.breakdowns } : {}),
    ...(spec.calculated_fields?.length ? { calculated_fields: spec.calculated_fields } : {}),
    time_range: range,
  };
}

/**
 * A PUT body for `t` (a full replacement) with `changes` applied: what is not changed is sent
 * back as it was, the query inline (without its `query_id`, so a changed query is taken).
 */
export function triggerPutBody(t: Trigger, changes: Record<string, unknown> = {}): Record<string, unknown> {
  const raw = t as unknown as Record<string, unknown>;
  return {
    ...Object.fromEntries(KEPT.flatMap((k) => (raw[k] !== undefined ? [[k, raw[k]]] : []))),
    name: t.name,
    description: t.description,
    query: t.query,
    threshold: t.threshold,
    frequency: t.frequency,
    alert_type: t.alert_type,
    disabled: t.disabled,
    recipients: t.recipients.map((r) => (r.type === 'marker' ? { type: 'marker', target: r.target } : { id: r.id })),
    ...changes,
  };
}

export function TriggerForm(props: {
  dataset: string;
  /** The query to watch (a new trigger), or the trigger's own (an edit). */
  spec: QuerySpec;
  trigger?: Trigger;
  onThreshold?: (t: { calc: string; value: number } | undefined) => void;
  onDone: (saved?: Trigger) => void;
}) {
  const t = props.trigger;
  const calcs = watchable(props.spec);
  const [name, setName] = useState(t?.name ?? '');
  const [description, setDescription] = useState(t?.description ?? '');
  const [calc, setCalc] = useState(calcs[0] ? calculationKey(calcs[0]) : 'COUNT');
  const [op, setOp] = useState<string>(t?.threshold.op ?? '>');
  const [value, setValue] = useState(t ? String(t.threshold.value) : '');
  const [frequency, setFrequency] = useState(t?.frequency ?? 900);
  const [rangeFactor, setRangeFactor] = useState(t ? Math.max(1, Math.round((t.query.time_range ?? t.frequency) / t.frequency)) : 1);
  const [alertType, setAlertType] = useState(t?.alert_type ?? 'on_change');
  const [disabled, setDisabled] = useState(t?.disabled ?? false);
  const [recipients, setRecipients] = useState<Recipient[] | undefined>(undefined);
  const [chosen, setChosen] = useState<string[]>(t?.recipients.filter((r) => r.type !== 'marker').flatMap((r) => (r.id ? [r.id] : [])) ?? []);
  const [state, setState] = useState<{ busy?: boolean; error?: unknown }>({});
  useEffect(() => {
    listRecipients().then(setRecipients, () => setRecipients([]));
  }, []);
  const number = value.trim() === '' ? NaN : Number(value);
  useEffect(() => {
    props.onThreshold?.(Number.isFinite(number) ? { calc, value: number } : undefined);
  }, [calc, number]);
  useEffect(() => () => props.onThreshold?.(undefined), []);

  const save = async (e: Event) => {
    e.preventDefault();
    setState({ busy: true });
    const fields = {
      name,
      description,
      query: triggerQuery(props.spec, calc, frequency * rangeFactor),
      threshold: { op, value: number, ...(t?.threshold.exceeded_limit ? { exceeded_limit: t.threshold.exceeded_limit } : {}) },
      frequency,
      alert_type: alertType,
      disabled,
      // Marker recipients (a trigger's text markers) are kept as they are.
      recipients: [...(t?.recipients.filter((r) => r.type === 'marker').map((r) => ({ type: 'marker', target: r.target })) ?? []), ...chosen.map((id) => ({ id }))],
    };
    const body = t ? triggerPutBody(t, fields) : fields;
    try {
      const saved = t ? await updateTrigger(props.dataset, t.id, body) : await createTrigger(props.dataset, body);
      props.onDone(saved);
    } catch (error) {
      setState({ error });
    }
  };
  const problem = (field: string) => (state.error instanceof ApiError ? state.error.fields.filter((f) => f.field === field || f.field.startsWith(`${field}.`)).map((f) => f.description).join('; ') : '');
  return (
    <form class="settings-form trigger-form" onSubmit={save} aria-label={t ? `Edit ${t.name}` : 'New trigger'}>
      <label class="field">
        Name
        <input name="name" required maxLength={120} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        {problem('name') && <span class="field-error">{problem('name')}</span>}
      </label>
      <div class="row trigger-condition">
        <label class="field">
          Fires when
          <select name="calculation" value={calc} disabled={t !== undefined} onChange={(e) => setCalc((e.target as HTMLSelectElement).value)}>
            {calcs.map((c) => <option key={calculationKey(c)} value={calculationKey(c)}>{calculationKey(c)}</option>)}
          </select>
        </label>
        <label class="field">
          is
          <select name="op" value={op} onChange={(e) => setOp((e.target as HTMLSelectElement).value)}>
            {OPS.map((o) => <option key={o} value={o}>{o}</option>)}
          </select>
        </label>
        <label class="field">
          Threshold
          <input name="threshold" type="number" step="any" required value={value} onInput={(e) => setValue((e.target as HTMLInputElement).value)} />
        </label>
      </div>
      {problem('threshold') && <span class="field-error">{problem('threshold')}</span>}
      {problem('query') && <span class="field-error">{problem('query')}</span>}
      <div class="row">
        <label class="field">
          Runs every
          <select name="frequency" value={String(frequency)} onChange={(e) => setFrequency(Number((e.target as HTMLSelectElement).value))}>
            {FREQUENCIES.map(([l, s]) => <option key={s} value={String(s)}>{l}</option>)}
          </select>
        </label>
        <label class="field">
          over the last
          <select name="range" value={String(rangeFactor)} onChange={(e) => setRangeFactor(Number((e.target as HTMLSelectElement).value))}>
            {[1, 2, 3, 4].map((f) => <option key={f} value={String(f)}>{f === 1 ? 'run' : `${f} runs`} ({Math.round((frequency * f) / 60)} min)</option>)}
          </select>
        </label>
        <label class="field">
          Notifies
          <select name="alert_type" value={alertType} onChange={(e) => setAlertType((e.target as HTMLSelectElement).value)}>
            <option value="on_change">when it starts and stops firing</option>
            <option value="on_true">at every run while it fires</option>
          </select>
        </label>
      </div>
      {problem('frequency') && <span class="field-error">{problem('frequency')}</span>}
      <label class="field">
        Description
        <input name="description" maxLength={1023} value={description} onInput={(e) => setDescription((e.target as HTMLInputElement).value)} />
      </label>
      <fieldset class="recipients-pick">
        <legend class="small muted">Recipients</legend>
        {recipients === undefined ? null : recipients.length === 0 ? (
          <span class="small muted">No recipients yet: make one on the Recipients page.</span>
        ) : (
          recipients.map((r) => (
            <label class="check" key={r.id}>
              <input type="checkbox" name="recipient" value={r.id} checked={chosen.includes(r.id)} onChange={(e) => setChosen((e.target as HTMLInputElement).checked ? [...chosen, r.id] : chosen.filter((x) => x !== r.id))} />
              <span class="badge accent">{r.type}</span> {recipientSummary(r)}
            </label>
          ))
        )}
        {problem('recipients') && <span class="field-error">{problem('recipients')}</span>}
      </fieldset>
      <label class="check">
        <input name="disabled" type="checkbox" checked={disabled} onChange={(e) => setDisabled((e.target as HTMLInputElement).checked)} />
        Disabled (not evaluated)
      </label>
      <div class="row">
        <button class="primary" type="submit" disabled={state.busy || !Number.isFinite(number) || name.trim() === ''}>{state.busy ? 'Saving…' : t ? 'Save' : 'Create trigger'}</button>
        <button type="button" class="ghost" onClick={() => props.onDone()}>Cancel</button>
      </div>
      {state.error !== undefined && <ErrorNotice error={state.error} title="Not saved" />}
    </form>
  );
}
