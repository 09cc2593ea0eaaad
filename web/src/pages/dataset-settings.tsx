// A dataset's settings, authored here: its description, JSON expansion depth and delete
// protection (PUT /1/datasets), its columns (describe, hide, retype: PUT /1/columns, a full
// replacement, so each save sends all three) and its calculated fields (create, edit, delete),
// whose expression the server checks as it is typed (POST /1/derived_columns/<ds>/validate).
import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError } from '../api/client.js';
import {
  createCalculatedField, deleteCalculatedField, getDataset, listCalculatedFields, listColumns, updateCalculatedField, updateColumn, updateDataset,
  validateExpression,
} from '../api/endpoints.js';
import type { CalculatedField, Column, DatasetDetail } from '../api/types.js';
import { ErrorNotice, Loaded, PageHead, useAsync } from '../components/ui.js';
import { Link } from '../router.js';
import { pathOf, type Scope } from '../routes.js';
import { useSession } from '../session.js';

const COLUMN_TYPES: Column['type'][] = ['string', 'integer', 'float', 'boolean'];
/** Rows shown at once: a wide dataset has thousands of columns; the filter narrows them. */
const SHOWN_COLUMNS = 200;

export function DatasetSettingsPage({ scope, dataset }: { scope: Scope; dataset: string }) {
  const ds = useAsync(() => getDataset(dataset), [dataset]);
  return (
    <div class="stack">
      <PageHead
        title={<>Settings of <span class="mono">{dataset}</span></>}
        sub="The dataset, its columns and its calculated fields"
      >
        <Link class="button" href={pathOf({ page: 'query', dataset, ...scope })}>Query</Link>
      </PageHead>
      <Loaded async={ds} label="Loading the dataset">
        {(d) => <DatasetForm key={d.slug} ds={d} onSaved={ds.reload} />}
      </Loaded>
      <CalculatedFields dataset={dataset} />
      <Columns dataset={dataset} />
    </div>
  );
}

function DatasetForm({ ds, onSaved }: { ds: DatasetDetail; onSaved: () => void }) {
  const { reloadDatasets } = useSession();
  const [description, setDescription] = useState(ds.description);
  const [depth, setDepth] = useState(String(ds.expand_json_depth));
  const [protectedOn, setProtected] = useState(ds.settings.delete_protected ?? false);
  const [state, setState] = useState<{ busy?: boolean; error?: unknown; saved?: boolean }>({});
  const depthOk = /^\d+$/.test(depth) && Number(depth) <= 10;
  const save = async (e: Event) => {
    e.preventDefault();
    setState({ busy: true });
    try {
      await updateDataset(ds.slug, { description, expand_json_depth: Number(depth), settings: { delete_protected: protectedOn } });
      setState({ saved: true });
      reloadDatasets();
      onSaved();
    } catch (error) {
      setState({ error });
    }
  };
  return (
    <section class="panel" aria-labelledby="ds-h">
      <h2 id="ds-h">Dataset</h2>
      <form class="settings-form" onSubmit={save}>
        <label class="field">
          Description
          <textarea name="description" rows={2} maxLength={1024} value={description} onInput={(e) => setDescription((e.target as HTMLTextAreaElement).value)} />
        </label>
        <label class="field">
          JSON expansion depth (0–10: how deep nested objects in events become columns)
          <input name="expand_json_depth" type="number" min={0} max={10} value={depth} aria-invalid={depthOk ? undefined : 'true'} onInput={(e) => setDepth((e.target as HTMLInputElement).value)} />
        </label>
        <label class="check">
          <input name="delete_protected" type="checkbox" checked={protectedOn} onChange={(e) => setProtected((e.target as HTMLInputElement).checked)} />
          Delete protection (the dataset cannot be deleted while it is on)
        </label>
        <div class="row">
          <button class="primary" type="submit" disabled={state.busy || !depthOk}>{state.busy ? 'Saving…' : 'Save'}</button>
          {state.saved && <span class="badge ok" role="status">Saved</span>}
        </div>
        {state.error !== undefined && <ErrorNotice error={state.error} title="Not saved" />}
      </form>
    </section>
  );
}

function Columns({ dataset }: { dataset: string }) {
  const columns = useAsync(() => listColumns(dataset), [dataset]);
  const [filter, setFilter] = useState('');
  return (
    <section class="panel flush" aria-labelledby="cols-h">
      <div class="row" style={{ padding: '12px 16px' }}>
        <h2 id="cols-h">Columns</h2>
        <span class="spacer" />
        <input type="search" placeholder="Filter columns" aria-label="Filter columns" value={filter} onInput={(e) => setFilter((e.target as HTMLInputElement).value)} />
      </div>
      <Loaded async={columns} label="Loading columns">
        {(list) => {
          const f = filter.trim().toLowerCase();
          const matching = [...list].sort((a, b) => a.key_name.localeCompare(b.key_name)).filter((c) => !f || c.key_name.toLowerCase().includes(f));
          return list.length === 0 ? (
            <p class="empty">No columns yet: they appear with the first events.</p>
          ) : (
            <div class="table-wrap">
              <table data-testid="columns-table">
                <thead>
                  <tr>
                    <th>Column</th>
                    <th>Type</th>
                    <th>Description</th>
                    <th>Hidden</th>
                    <th><span class="sr-only">Save</span></th>
                  </tr>
                </thead>
                <tbody>
                  {matching.slice(0, SHOWN_COLUMNS).map((c) => <ColumnRow key={c.id} dataset={dataset} column={c} />)}
                </tbody>
              </table>
              {matching.length > SHOWN_COLUMNS && (
                <p class="small muted" style={{ padding: '8px 16px' }}>
                  {SHOWN_COLUMNS} of {matching.length} columns shown: filter to find the others.
                </p>
              )}
            </div>
          );
        }}
      </Loaded>
    </section>
  );
}

function ColumnRow({ dataset, column }: { dataset: string; column: Column }) {
  const [saved, setSaved] = useState(column);
  const [draft, setDraft] = useState(column);
  const [state, setState] = useState<{ busy?: boolean; error?: unknown }>({});
  const dirty = draft.type !== saved.type || draft.description !== saved.description || draft.hidden !== saved.hidden;
  const save = async () => {
    setState({ busy: true });
    try {
      const c = await updateColumn(dataset, column.id, { type: draft.type, description: draft.description, hidden: draft.hidden });
      setSaved(c);
      setDraft(c);
      setState({});
    } catch (error) {
      setState({ error });
    }
  };
  return (
    <tr data-column={column.key_name}>
      <td class="mono">{column.key_name}</td>
      <td>
        <select aria-label={`Type of ${column.key_name}`} value={draft.type} onChange={(e) => setDraft({ ...draft, type: (e.target as HTMLSelectElement).value as Column['type'] })}>
          {COLUMN_TYPES.map((t) => <option key={t} value={t}>{t}</option>)}
        </select>
      </td>
      <td>
        <input aria-label={`Description of ${column.key_name}`} maxLength={255} value={draft.description} onInput={(e) => setDraft({ ...draft, description: (e.target as HTMLInputElement).value })} />
        {state.error !== undefined && <div class="field-error" role="alert">{(state.error as Error).message}</div>}
      </td>
      <td>
        <input type="checkbox" aria-label={`Hide ${column.key_name}`} checked={draft.hidden} onChange={(e) => setDraft({ ...draft, hidden: (e.target as HTMLInputElement).checked })} />
      </td>
      <td>
        <button class={dirty ? 'primary' : ''} disabled={!dirty || state.busy} onClick={() => void save()}>{state.busy ? 'Saving…' : 'Save'}</button>
      </td>
    </tr>
  );
}

function CalculatedFields({ dataset }: { dataset: string }) {
  const fields = useAsync(() => listCalculatedFields(dataset), [dataset]);
  const [editing, setEditing] = useState<CalculatedField | 'new' | null>(null);
  const [error, setError] = useState<unknown>(undefined);
  const remove = async (f: CalculatedField) => {
    if (!confirm(`Delete the calculated field ${f.alias}?`)) return;
    setError(undefined);
    try {
      await deleteCalculatedField(dataset, f.id);
      fields.reload();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <section class="panel flush" aria-labelledby="cf-h">
      <div class="row" style={{ padding: '12px 16px' }}>
        <h2 id="cf-h">Calculated fields</h2>
        <span class="spacer" />
        <button class="primary" onClick={() => setEditing('new')} disabled={editing !== null}>New calculated field</button>
      </div>
      {error !== undefined && <div style={{ padding: '0 16px 12px' }}><ErrorNotice error={error} title="Not deleted" /></div>}
      {editing !== null && (
        <CalculatedFieldForm
          dataset={dataset}
          field={editing === 'new' ? undefined : editing}
          onDone={(changed) => {
            setEditing(null);
            if (changed) fields.reload();
          }}
        />
      )}
      <Loaded async={fields} label="Loading calculated fields">
        {(list) =>
          list.length === 0 ? (
            <p class="empty">No calculated fields yet.</p>
          ) : (
            <table data-testid="calculated-fields-table">
              <thead>
                <tr>
                  <th>Alias</th>
                  <th>Expression</th>
                  <th>Description</th>
                  <th><span class="sr-only">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                {list.map((f) => (
                  <tr key={f.id} data-field={f.alias}>
                    <td class="mono">{f.alias}</td>
                    <td class="mono small expr">{f.expression}</td>
                    <td>{f.description}</td>
                    <td class="nowrap">
                      <button class="ghost" onClick={() => setEditing(f)} disabled={editing !== null}>Edit</button>
                      <button class="ghost" onClick={() => void remove(f)}>Delete</button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
    </section>
  );
}

/** The server's verdict on an expression as it is typed: its type, or the problem and where. */
type Check = { state: 'idle' | 'checking' } | { state: 'ok'; type: string } | { state: 'bad'; message: string; position?: number };

function useExpressionCheck(dataset: string, alias: string, expression: string, replacing?: string): Check {
  const [check, setCheck] = useState<Check>({ state: 'idle' });
  useEffect(() => {
    if (expression.trim() === '') {
      setCheck({ state: 'idle' });
      return;
    }
    const ctl = new AbortController();
    setCheck({ state: 'checking' });
    const timer = setTimeout(() => {
      validateExpression(dataset, { alias: alias.trim() || '__new_field', expression, ...(replacing ? { id: replacing } : {}) }, ctl.signal).then(
        (r) => !ctl.signal.aborted && setCheck({ state: 'ok', type: r.type }),
        (e) => {
          if (ctl.signal.aborted || (e as Error).name === 'AbortError') return;
          const problem = e instanceof ApiError ? e.fields.find((f) => f.field === 'expression')?.description ?? e.message : String(e);
          const at = /at position (\d+)/.exec(problem);
          setCheck({ state: 'bad', message: problem.replace(/^expression: /, ''), position: at ? Number(at[1]) : undefined });
        },
      );
    }, 300);
    return () => {
      clearTimeout(timer);
      ctl.abort();
    };
  }, [dataset, alias, expression, replacing]);
  return check;
}

function CalculatedFieldForm({ dataset, field, onDone }: { dataset: string; field?: CalculatedField; onDone: (changed: boolean) => void }) {
  const [alias, setAlias] = useState(field?.alias ?? '');
  const [expression, setExpression] = useState(field?.expression ?? '');
  const [description, setDescription] = useState(field?.description ?? '');
  const [state, setState] = useState<{ busy?: boolean; error?: unknown }>({});
  const check = useExpressionCheck(dataset, alias, expression, field?.id);
  const pointer = useMemo(() => (check.state === 'bad' && check.position !== undefined ? `${' '.repeat(Math.min(check.position, expression.length))}^` : ''), [check, expression]);
  const save = async (e: Event) => {
    e.preventDefault();
    setState({ busy: true });
    try {
      const body = { alias: alias.trim(), expression, description };
      if (field) await updateCalculatedField(dataset, field.id, body);
      else await createCalculatedField(dataset, body);
      onDone(true);
    } catch (error) {
      setState({ error });
    }
  };
  return (
    <form class="settings-form cf-form" onSubmit={save} aria-label={field ? `Edit ${field.alias}` : 'New calculated field'}>
      <label class="field">
        Alias
        <input name="alias" required maxLength={255} value={alias} onInput={(e) => setAlias((e.target as HTMLInputElement).value)} />
      </label>
      <label class="field">
        Expression
        <textarea
          name="expression"
          class="mono"
          rows={3}
          maxLength={4095}
          spellcheck={false}
          placeholder={'IF(GTE($duration_ms, 500), "slow", "ok")'}
          value={expression}
          aria-invalid={check.state === 'bad' ? 'true' : undefined}
          aria-describedby="cf-check"
          onInput={(e) => setExpression((e.target as HTMLTextAreaElement).value)}
        />
      </label>
      <div id="cf-check" class="small" role="status" data-testid="expression-check">
        {check.state === 'checking' && <span class="muted">Checking…</span>}
        {check.state === 'ok' && <span class="badge ok">valid · {check.type}</span>}
        {check.state === 'bad' && (
          <>
            {pointer && <pre class="mono caret">{expression.split('\n')[0]}{'\n'}{pointer}</pre>}
            <span class="field-error">{check.message}</span>
          </>
        )}
      </div>
      <label class="field">
        Description
        <input name="description" maxLength={255} value={description} onInput={(e) => setDescription((e.target as HTMLInputElement).value)} />
      </label>
      <div class="row">
        <button class="primary" type="submit" disabled={state.busy || alias.trim() === '' || check.state === 'bad'}>{state.busy ? 'Saving…' : field ? 'Save' : 'Create'}</button>
        <button type="button" class="ghost" onClick={() => onDone(false)}>Cancel</button>
      </div>
      {state.error !== undefined && <ErrorNotice error={state.error} title="Not saved" />}
    </form>
  );
}
