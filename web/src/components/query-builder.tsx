// The query builder, in Honeycomb's layout: VISUALIZE, WHERE, GROUP BY, ORDER BY, LIMIT, HAVING
// and inline calculated fields, each a box of rows. Column names are suggested from the Columns
// API (a native datalist: type to filter, arrow keys to pick). Problems the API reports are shown
// in the box of the clause they concern.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { OFFSETS } from '../results.js';
import { windowOf } from '../time.js';
import type { FieldProblem } from '../api/client.js';
import { clauseOf, filterValue, LIST_VALUE, NO_COLUMN, NO_VALUE } from '../spec-edit.js';
import {
  FILTER_OPS, HAVING_OPS, QUERY_OPS, calculationKey, type Calculation, type Filter, type FilterOp, type Having, type HavingOp, type Order, type QueryOp, type QuerySpec,
} from '../api/types.js';

export interface ColumnInfo {
  name: string;
  type: string;
}




const valueText = (v: Filter['value']) => (v === undefined || v === null ? '' : Array.isArray(v) ? v.join(', ') : String(v));

export function QueryBuilder(props: {
  spec: QuerySpec;
  onChange: (spec: QuerySpec) => void;
  columns: ColumnInfo[];
  problems: FieldProblem[];
  idPrefix?: string;
}) {
  const { spec, onChange, columns } = props;
  const listId = `${props.idPrefix ?? 'qb'}-columns`;
  const types = new Map(columns.map((c) => [c.name, c.type]));
  const calcs = spec.calculations ?? [];
  const filters = spec.filters ?? [];
  const breakdowns = spec.breakdowns ?? [];
  const orders = spec.orders ?? [];
  const havings = spec.havings ?? [];
  const inline = spec.calculated_fields ?? [];
  const set = (patch: Partial<QuerySpec>) => onChange({ ...spec, ...patch });
  const problemsOf = (clause: string) => props.problems.filter((p) => clauseOf(p.field) === clause);
  const columnInput = (value: string, onInput: (v: string) => void, label: string, placeholder = 'column') => (
    <input list={listId} value={value} placeholder={placeholder} aria-label={label} spellcheck={false} onInput={(e) => onInput((e.target as HTMLInputElement).value)} />
  );
  const calcKeys = calcs.map(calculationKey);

  return (
    <div class="builder" role="group" aria-label="Query">
      <datalist id={listId}>
        {[...columns.map((c) => c.name), ...inline.map((c) => c.name)].map((n) => (
          <option key={n} value={n} />
        ))}
      </datalist>

      <Clause title="Visualize" id="visualize" problems={problemsOf('visualize')} onAdd={() => set({ calculations: [...calcs, { op: 'COUNT' }] })}>
        {calcs.length === 0 && <div class="muted small">COUNT (the default)</div>}
        {calcs.map((c, i) => (
          <div class="line" key={i}>
            <select
              class="op"
              aria-label={`Calculation ${i + 1}`}
              value={c.op}
              onChange={(e) => {
                const op = (e.target as HTMLSelectElement).value as QueryOp;
                const next: Calculation = NO_COLUMN.includes(op) ? { op } : { op, column: c.column ?? '' };
                set({ calculations: calcs.map((x, j) => (j === i ? next : x)) });
              }}
            >
              {QUERY_OPS.map((op) => (
                <option key={op} value={op}>
                  {op}
                </option>
              ))}
            </select>
            {!NO_COLUMN.includes(c.op) &&
              columnInput(c.column ?? '', (v) => set({ calculations: calcs.map((x, j) => (j === i ? { ...x, column: v } : x)) }), `Column of calculation ${i + 1}`)}
            <Remove label={`Remove calculation ${i + 1}`} onClick={() => set({ calculations: calcs.filter((_, j) => j !== i) })} />
          </div>
        ))}
      </Clause>

      <Clause
        title="Where"
        id="where"
        problems={problemsOf('where')}
        onAdd={() => set({ filters: [...filters, { column: '', op: '=', value: '' }] })}
        extra={
          filters.length > 1 && (
            <div class="segmented" role="group" aria-label="Combine filters with">
              {(['AND', 'OR'] as const).map((c) => (
                <button key={c} type="button" aria-pressed={(spec.filter_combination ?? 'AND') === c} onClick={() => set({ filter_combination: c })}>
                  {c}
                </button>
              ))}
            </div>
          )
        }
      >
        {filters.map((f, i) => {
          const update = (x: Partial<Filter>) => set({ filters: filters.map((y, j) => (j === i ? { ...y, ...x } : y)) });
          return (
            <div class="line" key={i}>
              {columnInput(f.column ?? '', (v) => update({ column: v }), `Column of filter ${i + 1}`)}
              <select
                class="op"
                aria-label={`Operator of filter ${i + 1}`}
                value={f.op}
                onChange={(e) => {
                  const op = (e.target as HTMLSelectElement).value as FilterOp;
                  update({ op, value: filterValue(op, valueText(f.value), types.get(f.column ?? '')) });
                }}
              >
                {FILTER_OPS.map((op) => (
                  <option key={op} value={op}>
                    {op}
                  </option>
                ))}
              </select>
              {!NO_VALUE.includes(f.op) && (
                <input
                  value={valueText(f.value)}
                  placeholder={LIST_VALUE.includes(f.op) ? 'a, b, c' : 'value'}
                  aria-label={`Value of filter ${i + 1}`}
                  onInput={(e) => update({ value: filterValue(f.op, (e.target as HTMLInputElement).value, types.get(f.column ?? '')) })}
                />
              )}
              <Remove label={`Remove filter ${i + 1}`} onClick={() => set({ filters: filters.filter((_, j) => j !== i) })} />
            </div>
          );
        })}
      </Clause>

      <Clause title="Group by" id="group" problems={problemsOf('group')} onAdd={() => set({ breakdowns: [...breakdowns, ''] })}>
        {breakdowns.map((b, i) => (
          <div class="line" key={i}>
            {columnInput(b, (v) => set({ breakdowns: breakdowns.map((x, j) => (j === i ? v : x)) }), `Group by column ${i + 1}`)}
            <Remove label={`Remove group ${i + 1}`} onClick={() => set({ breakdowns: breakdowns.filter((_, j) => j !== i) })} />
          </div>
        ))}
      </Clause>

      <Clause
        title="Order by"
        id="order"
        problems={problemsOf('order')}
        onAdd={() => set({ orders: [...orders, calcs[0] ? { op: calcs[0].op, ...(calcs[0].column ? { column: calcs[0].column } : {}), order: 'descending' } : { op: 'COUNT', order: 'descending' }] })}
      >
        {orders.map((o, i) => {
          const current = o.op ? calculationKey({ op: o.op, column: o.column }) : `by:${o.column ?? ''}`;
          const choices = [...calcKeys.filter((k) => !k.startsWith('HEATMAP')), ...breakdowns.filter(Boolean).map((b) => `by:${b}`)];
          if (!choices.includes(current)) choices.push(current);
          return (
            <div class="line" key={i}>
              <select
                aria-label={`Order ${i + 1}`}
                value={current}
                onChange={(e) => {
                  const v = (e.target as HTMLSelectElement).value;
                  const next: Order = v.startsWith('by:') ? { column: v.slice(3), order: o.order } : { ...orderOfKey(calcs, v), order: o.order };
                  set({ orders: orders.map((x, j) => (j === i ? next : x)) });
                }}
              >
                {choices.map((k) => (
                  <option key={k} value={k}>
                    {k.startsWith('by:') ? k.slice(3) : k}
                  </option>
                ))}
              </select>
              <select
                class="op"
                aria-label={`Direction of order ${i + 1}`}
                value={o.order ?? 'ascending'}
                onChange={(e) => set({ orders: orders.map((x, j) => (j === i ? { ...x, order: (e.target as HTMLSelectElement).value as Order['order'] } : x)) })}
              >
                <option value="descending">desc</option>
                <option value="ascending">asc</option>
              </select>
              <Remove label={`Remove order ${i + 1}`} onClick={() => set({ orders: orders.filter((_, j) => j !== i) })} />
            </div>
          );
        })}
      </Clause>

      <Clause title="Limit" id="limit" problems={problemsOf('limit')}>
        <div class="line">
          <input
            type="number"
            min={1}
            max={1000}
            placeholder="1000"
            aria-label="Limit"
            value={spec.limit ?? ''}
            onInput={(e) => {
              const v = (e.target as HTMLInputElement).value;
              set({ limit: v === '' ? undefined : Number(v) });
            }}
          />
        </div>
      </Clause>

      <Clause
        title="Having"
        id="having"
        problems={problemsOf('having')}
        onAdd={() => {
          const c = calcs.find((x) => x.op !== 'HEATMAP') ?? { op: 'COUNT' as const };
          set({ havings: [...havings, { calculate_op: c.op as Having['calculate_op'], ...(c.column ? { column: c.column } : {}), op: '>', value: 0 }] });
        }}
      >
        {havings.map((h, i) => {
          const key = calculationKey({ op: h.calculate_op, column: h.column });
          const choices = calcKeys.filter((k) => !k.startsWith('HEATMAP'));
          if (!choices.includes(key)) choices.push(key);
          const update = (x: Partial<Having>) => set({ havings: havings.map((y, j) => (j === i ? { ...y, ...x } : y)) });
          return (
            <div class="line" key={i}>
              <select
                aria-label={`Having ${i + 1} calculation`}
                value={key}
                onChange={(e) => {
                  const o = orderOfKey(calcs, (e.target as HTMLSelectElement).value);
                  update({ calculate_op: o.op as Having['calculate_op'], column: o.column });
                }}
              >
                {choices.map((k) => (
                  <option key={k} value={k}>
                    {k}
                  </option>
                ))}
              </select>
              <select class="op" aria-label={`Having ${i + 1} operator`} value={h.op} onChange={(e) => update({ op: (e.target as HTMLSelectElement).value as HavingOp })}>
                {HAVING_OPS.map((op) => (
                  <option key={op} value={op}>
                    {op}
                  </option>
                ))}
              </select>
              <input type="number" aria-label={`Having ${i + 1} value`} value={h.value} onInput={(e) => update({ value: Number((e.target as HTMLInputElement).value) })} />
              <Remove label={`Remove having ${i + 1}`} onClick={() => set({ havings: havings.filter((_, j) => j !== i) })} />
            </div>
          );
        })}
      </Clause>

      {(inline.length > 0 || problemsOf('calculated').length > 0) && <Clause
        title="Calculated fields"
        id="calculated"
        problems={problemsOf('calculated')}
        onAdd={() => set({ calculated_fields: [...inline, { name: '', expression: '' }] })}
        wide
      >
        {inline.map((c, i) => {
          const update = (x: Partial<typeof c>) => set({ calculated_fields: inline.map((y, j) => (j === i ? { ...y, ...x } : y)) });
          return (
            <div class="line" key={i}>
              <input class="mono" style={{ maxWidth: '160px' }} placeholder="name" aria-label={`Name of calculated field ${i + 1}`} value={c.name} onInput={(e) => update({ name: (e.target as HTMLInputElement).value })} />
              <input
                class="mono"
                placeholder='IF(GTE($status, 500), "error", "ok")'
                aria-label={`Expression of calculated field ${i + 1}`}
                spellcheck={false}
                value={c.expression}
                onInput={(e) => update({ expression: (e.target as HTMLInputElement).value })}
              />
              <Remove label={`Remove calculated field ${i + 1}`} onClick={() => set({ calculated_fields: inline.filter((_, j) => j !== i) })} />
            </div>
          );
        })}
      </Clause>}
    </div>
  );
}

/** The offsets offered first; "Custom" offers all of Honeycomb's. */
const COMMON = [3600, 86400, 604800];

/**
 * "Compare to": none, 1 hour, 1 day or 1 week earlier, or custom (any offset the API allows);
 * offsets shorter than the query's window are not offered (the API refuses them).
 */
export function CompareControl({ spec, onChange }: { spec: QuerySpec; onChange: (s: QuerySpec) => void }) {
  const offset = spec.compare_time_offset_seconds;
  const [custom, setCustom] = useState(offset !== undefined && !COMMON.includes(offset));
  const w = windowOf(spec, Math.floor(Date.now() / 1000));
  const duration = w.end - w.start;
  const set = (v: number | undefined) => {
    const { compare_time_offset_seconds: _, ...rest } = spec;
    onChange(v === undefined ? rest : { ...rest, compare_time_offset_seconds: v });
  };
  const tooShort = offset !== undefined && offset < duration;
  return (
    <span class="row small muted" data-testid="compare">
      <label class="row">
        Compare to
        <select
          aria-label="Compare to"
          value={custom ? 'custom' : String(offset ?? '')}
          onChange={(e) => {
            const v = (e.target as HTMLSelectElement).value;
            setCustom(v === 'custom');
            if (v === 'custom') set(offset ?? OFFSETS.find((o) => o.seconds >= duration)?.seconds);
            else set(v === '' ? undefined : Number(v));
          }}
        >
          <option value="">None</option>
          {COMMON.map((s) => (
            <option key={s} value={String(s)} disabled={s < duration}>
              {OFFSETS.find((o) => o.seconds === s)!.label} earlier
            </option>
          ))}
          <option value="custom">Custom…</option>
        </select>
      </label>
      {custom && (
        <select aria-label="Compare offset" value={String(offset ?? '')} onChange={(e) => set(Number((e.target as HTMLSelectElement).value))}>
          {OFFSETS.map((o) => (
            <option key={o.seconds} value={String(o.seconds)} disabled={o.seconds < duration}>
              {o.label} earlier
            </option>
          ))}
        </select>
      )}
      {tooShort && (
        <span class="field-error" role="alert">
          shorter than the time range
        </span>
      )}
    </span>
  );
}

function orderOfKey(calcs: Calculation[], key: string): { op: QueryOp; column?: string } {
  const c = calcs.find((x) => calculationKey(x) === key);
  if (c) return { op: c.op, ...(c.column ? { column: c.column } : {}) };
  const m = /^([A-Z0-9_]+)(?:\((.*)\))?$/.exec(key);
  return { op: (m?.[1] ?? 'COUNT') as QueryOp, ...(m?.[2] ? { column: m[2] } : {}) };
}

function Clause(props: { title: string; id: string; problems: FieldProblem[]; onAdd?: () => void; extra?: ComponentChildren; wide?: boolean; children: ComponentChildren }) {
  const errId = `${props.id}-errors`;
  return (
    <section
      class={`clause${props.problems.length ? ' has-error' : ''}`}
      aria-labelledby={`${props.id}-h`}
      aria-describedby={props.problems.length ? errId : undefined}
      data-clause={props.id}
      style={props.wide ? { gridColumn: '1 / -1' } : undefined}
    >
      <h3 id={`${props.id}-h`}>
        {props.title}
        {props.extra}
      </h3>
      {props.children}
      {props.onAdd && (
        <button type="button" class="add ghost" onClick={props.onAdd} aria-label={`Add to ${props.title}`}>
          + Add
        </button>
      )}
      {props.problems.length > 0 && (
        <div id={errId} class="field-error" role="alert">
          {props.problems.map((p) => (
            <div key={p.field + p.description}>{p.field.replace(/^query\./, '')}: {p.description}</div>
          ))}
        </div>
      )}
    </section>
  );
}

function Remove({ label, onClick }: { label: string; onClick: () => void }) {
  return (
    <button type="button" class="icon" aria-label={label} title={label} onClick={onClick}>
      ×
    </button>
  );
}

