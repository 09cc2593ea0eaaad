// Making and editing an SLO: its dataset, the SLI (a boolean calculated field of the dataset,
// picked from the list or written here and checked by the server as it is typed; a new one is
// saved as a calculated field first), target and period. Problems the API reports are shown
// next to their field.
import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../api/client.js';
import { createCalculatedField, createSlo, listCalculatedFields, updateSlo, validateExpression } from '../api/endpoints.js';
import type { Slo } from '../api/types.js';
import { useSession } from '../session.js';
import { ErrorNotice } from './ui.js';

const NEW_SLI = '__new';

export function SloForm({ slo, dataset: fixedDataset, onDone }: { slo?: Slo; dataset?: string; onDone: (saved?: { dataset: string; slo: Slo }) => void }) {
  const { datasets } = useSession();
  const [dataset, setDataset] = useState(fixedDataset ?? datasets?.[0]?.slug ?? '');
  const [name, setName] = useState(slo?.name ?? '');
  const [description, setDescription] = useState(slo?.description ?? '');
  const [sli, setSli] = useState(slo?.sli.alias ?? '');
  const [newAlias, setNewAlias] = useState('');
  const [expression, setExpression] = useState('');
  const [target, setTarget] = useState(slo ? String(slo.target_per_million / 10_000) : '99.9');
  const [days, setDays] = useState(String(slo?.time_period_days ?? 30));
  const [fields, setFields] = useState<{ alias: string; expression: string }[]>([]);
  const [check, setCheck] = useState<{ ok?: string; problem?: string }>({});
  const [state, setState] = useState<{ busy?: boolean; error?: unknown }>({});

  useEffect(() => {
    if (!dataset) return;
    listCalculatedFields(dataset).then((list) => {
      setFields(list);
      setSli((s) => s || (list.find((f) => /^(GT|GTE|LT|LTE|EQUALS|NOT|AND|OR|EXISTS|CONTAINS|STARTS_WITH|REG_MATCH|IN)\(/.test(f.expression))?.alias ?? NEW_SLI));
    }, () => setFields([]));
  }, [dataset]);

  // The server's check of a new SLI's expression as it is typed (an SLI must be boolean).
  const writing = sli === NEW_SLI;
  useEffect(() => {
    if (!writing || expression.trim() === '' || !dataset) return setCheck({});
    const ctl = new AbortController();
    const timer = setTimeout(() => {
      validateExpression(dataset, { alias: newAlias.trim() || 'sli', expression }, ctl.signal).then(
        (r) => setCheck(r.type === 'boolean' ? { ok: r.type } : { problem: `an SLI must be true or false; this expression is ${r.type}` }),
        (e) => !ctl.signal.aborted && setCheck({ problem: e instanceof ApiError ? (e.fields[0]?.description ?? e.message) : String(e) }),
      );
    }, 300);
    return () => {
      clearTimeout(timer);
      ctl.abort();
    };
  }, [writing, expression, newAlias, dataset]);

  const targetNum = Number(target);
  const targetOk = target.trim() !== '' && targetNum > 0 && targetNum < 100;
  const save = async (e: Event) => {
    e.preventDefault();
    setState({ busy: true });
    try {
      let alias = sli;
      if (writing) {
        alias = newAlias.trim();
        await createCalculatedField(dataset, { alias, expression, description: `SLI of ${name}` });
        setSli(alias);
      }
      const body = { name, description, sli: { alias }, time_period_days: Number(days), target_per_million: Math.round(targetNum * 10_000) };
      const saved = slo ? await updateSlo(dataset, slo.id, body) : await createSlo(dataset, body);
      onDone({ dataset, slo: saved });
    } catch (error) {
      setState({ error });
    }
  };
  const problem = (field: string) => (state.error instanceof ApiError ? state.error.fields.find((f) => f.field === field || f.field.startsWith(`${field}.`))?.description : undefined);
  return (
    <form class="settings-form slo-form" onSubmit={save} aria-label={slo ? `Edit ${slo.name}` : 'New SLO'}>
      {!fixedDataset && (
        <label class="field">
          Dataset
          <select name="dataset" value={dataset} onChange={(e) => setDataset((e.target as HTMLSelectElement).value)}>
            {(datasets ?? []).map((d) => <option key={d.slug} value={d.slug}>{d.name}</option>)}
          </select>
        </label>
      )}
      <label class="field">
        Name
        <input name="name" required maxLength={120} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        {problem('name') && <span class="field-error">{problem('name')}</span>}
      </label>
      <label class="field">
        Description
        <input name="description" maxLength={1023} value={description} onInput={(e) => setDescription((e.target as HTMLInputElement).value)} />
      </label>
      <label class="field">
        SLI (a calculated field that is true for a good event, false for a bad one, and null where the SLO does not apply)
        <select name="sli" value={sli} onChange={(e) => setSli((e.target as HTMLSelectElement).value)}>
          {fields.map((f) => <option key={f.alias} value={f.alias}>{f.alias} = {f.expression}</option>)}
          <option value={NEW_SLI}>Write a new one…</option>
        </select>
        {problem('sli') && <span class="field-error">{problem('sli')}</span>}
      </label>
      {writing && (
        <div class="grid cols-2">
          <label class="field">
            New field's alias
            <input name="sli_alias" required maxLength={255} value={newAlias} onInput={(e) => setNewAlias((e.target as HTMLInputElement).value)} />
          </label>
          <label class="field">
            Expression
            <input name="sli_expression" class="mono" required value={expression} placeholder="LT($duration_ms, 300)" onInput={(e) => setExpression((e.target as HTMLInputElement).value)} />
            <span data-testid="sli-check" role="status">
              {check.ok && <span class="badge ok">valid · {check.ok}</span>}
              {check.problem && <span class="field-error">{check.problem}</span>}
            </span>
          </label>
        </div>
      )}
      <div class="grid cols-2">
        <label class="field">
          Target (% of events good)
          <input name="target" type="number" step="any" min="0" max="100" required value={target} aria-invalid={targetOk ? undefined : 'true'} onInput={(e) => setTarget((e.target as HTMLInputElement).value)} />
          {problem('target_per_million') && <span class="field-error">{problem('target_per_million')}</span>}
        </label>
        <label class="field">
          Period (days)
          <input name="time_period_days" type="number" min="1" required value={days} onInput={(e) => setDays((e.target as HTMLInputElement).value)} />
          {problem('time_period_days') && <span class="field-error">{problem('time_period_days')}</span>}
        </label>
      </div>
      <div class="row">
        <button class="primary" type="submit" disabled={state.busy || !targetOk || (writing && !check.ok) || !dataset}>{state.busy ? 'Saving…' : slo ? 'Save' : 'Create SLO'}</button>
        <button type="button" class="ghost" onClick={() => onDone()}>Cancel</button>
      </div>
      {state.error !== undefined && <ErrorNotice error={state.error} title="Not saved" />}
    </form>
  );
}
