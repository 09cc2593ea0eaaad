// Making a burn alert of either kind for an SLO: "exhaustion time" (the budget would run out
// within N minutes at the current burn) or "budget rate" (the budget fell by at least X % within
// a window), with its recipients picked from the team's.
import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../api/client.js';
import { createBurnAlert, listRecipients } from '../api/endpoints.js';
import type { Recipient } from '../api/types.js';
import { recipientSummary } from '../pages/recipients.js';
import { ErrorNotice } from './ui.js';

export function BurnAlertForm({ dataset, sloId, onDone }: { dataset: string; sloId: string; onDone: (changed: boolean) => void }) {
  const [kind, setKind] = useState<'exhaustion_time' | 'budget_rate'>('exhaustion_time');
  const [minutes, setMinutes] = useState('240');
  const [windowMinutes, setWindowMinutes] = useState('60');
  const [drop, setDrop] = useState('1');
  const [description, setDescription] = useState('');
  const [recipients, setRecipients] = useState<Recipient[] | undefined>(undefined);
  const [chosen, setChosen] = useState<string[]>([]);
  const [state, setState] = useState<{ busy?: boolean; error?: unknown }>({});
  useEffect(() => {
    listRecipients().then(setRecipients, () => setRecipients([]));
  }, []);
  const save = async (e: Event) => {
    e.preventDefault();
    setState({ busy: true });
    const body: Record<string, unknown> = { alert_type: kind, slo: { id: sloId }, description, recipients: chosen.map((id) => ({ id })) };
    if (kind === 'exhaustion_time') body.exhaustion_minutes = Number(minutes);
    else {
      body.budget_rate_window_minutes = Number(windowMinutes);
      body.budget_rate_decrease_threshold_per_million = Math.round(Number(drop) * 10_000);
    }
    try {
      await createBurnAlert(dataset, body);
      onDone(true);
    } catch (error) {
      setState({ error });
    }
  };
  const problem = (field: string) => (state.error instanceof ApiError ? state.error.fields.find((f) => f.field === field || f.field.startsWith(`${field}.`))?.description : undefined);
  return (
    <form class="settings-form burn-alert-form" onSubmit={save} aria-label="New burn alert">
      <div class="segmented" role="group" aria-label="Kind">
        <button type="button" aria-pressed={kind === 'exhaustion_time'} onClick={() => setKind('exhaustion_time')}>Exhaustion time</button>
        <button type="button" aria-pressed={kind === 'budget_rate'} onClick={() => setKind('budget_rate')}>Budget rate</button>
      </div>
      {kind === 'exhaustion_time' ? (
        <label class="field">
          Alert when the budget would run out within (minutes, at the current burn rate)
          <input name="exhaustion_minutes" type="number" min="0" required value={minutes} onInput={(e) => setMinutes((e.target as HTMLInputElement).value)} />
          {problem('exhaustion_minutes') && <span class="field-error">{problem('exhaustion_minutes')}</span>}
        </label>
      ) : (
        <div class="grid cols-2">
          <label class="field">
            Alert when the budget falls by at least (%)
            <input name="budget_drop" type="number" step="any" min="0.0001" max="100" required value={drop} onInput={(e) => setDrop((e.target as HTMLInputElement).value)} />
            {problem('budget_rate_decrease_threshold_per_million') && <span class="field-error">{problem('budget_rate_decrease_threshold_per_million')}</span>}
          </label>
          <label class="field">
            within (minutes, at least 60)
            <input name="budget_rate_window_minutes" type="number" min="60" required value={windowMinutes} onInput={(e) => setWindowMinutes((e.target as HTMLInputElement).value)} />
            {problem('budget_rate_window_minutes') && <span class="field-error">{problem('budget_rate_window_minutes')}</span>}
          </label>
        </div>
      )}
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
      <div class="row">
        <button class="primary" type="submit" disabled={state.busy || chosen.length === 0}>{state.busy ? 'Saving…' : 'Create burn alert'}</button>
        <button type="button" class="ghost" onClick={() => onDone(false)}>Cancel</button>
      </div>
      {state.error !== undefined && <ErrorNotice error={state.error} title="Not saved" />}
    </form>
  );
}
