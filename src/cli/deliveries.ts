// `waggle deliveries`: the notification delivery log (newest first), read straight from the
// config store, so it works beside a running server. Never shows recipient secrets: the log
// holds the recipient's id, type and target (channel, address or name), not its URL or keys.
import type { Command } from 'commander';
import { listDeliveries, type DeliveryState } from '../notify/log.js';
import type { ConfigStore } from '../stores/config/types.js';
import { withStore, type StoreOptions } from './store-options.js';

const STATES: DeliveryState[] = ['queued', 'retrying', 'delivered', 'failed', 'refused'];

interface Options extends StoreOptions {
  team?: string;
  environment?: string;
  state?: string;
  recipient?: string;
  alert?: string;
  limit: string;
  json?: boolean;
}

async function resolveScope(store: ConfigStore, opts: Options): Promise<{ teamId?: string; environmentId?: string }> {
  if (!opts.team && !opts.environment) return {};
  const teams = await store.listTeams();
  const team = opts.team ? teams.find((t) => t.slug === opts.team) : teams.length === 1 ? teams[0] : undefined;
  if (!team) throw new Error(opts.team ? `no team ${opts.team}` : `name a team with --team (one of: ${teams.map((t) => t.slug).join(', ')})`);
  if (!opts.environment) return { teamId: team.id };
  const envs = await store.listEnvironments(team.id, { limit: 100_000 });
  const env = envs.find((e) => e.slug === opts.environment);
  if (!env) throw new Error(`no environment ${opts.environment} in team ${team.slug} (one of: ${envs.map((e) => e.slug).join(', ')})`);
  return { teamId: team.id, environmentId: env.id };
}

export function registerDeliveriesCommand(program: Command, addStoreOptions: (c: Command) => Command): void {
  addStoreOptions(program.command('deliveries').description('show the notification delivery log, newest first'))
    .option('--team <slug>', 'only this team')
    .option('--environment <slug>', 'only this environment (of --team, or of the only team)')
    .option('--state <state>', `only deliveries in this state: ${STATES.join(', ')}`)
    .option('--recipient <id>', 'only deliveries to this recipient')
    .option('--alert <id>', 'only deliveries of this trigger, burn alert or signal')
    .option('--limit <n>', 'at most this many', '50')
    .option('--json', 'print JSON (one array, with every attempt)')
    .action((opts: Options) =>
      withStore(opts, async (store) => {
        if (opts.state && !STATES.includes(opts.state as DeliveryState)) throw new Error(`--state must be one of ${STATES.join(', ')}`);
        const limit = Number(opts.limit);
        if (!Number.isInteger(limit) || limit < 1) throw new Error('--limit must be a positive integer');
        const scope = await resolveScope(store, opts);
        const rows = await listDeliveries(store, {
          ...scope,
          state: opts.state as DeliveryState | undefined,
          recipientId: opts.recipient,
          alertId: opts.alert,
          limit,
        });
        if (opts.json) {
          const out = rows.map((o) => {
            const { notification, ...rest } = o.body;
            return {
              id: o.id,
              created_at: o.createdAt,
              updated_at: o.updatedAt,
              team_id: o.teamId,
              environment_id: o.environmentId,
              ...rest,
              notification,
            };
          });
          return console.log(JSON.stringify(out, null, 2));
        }
        if (!rows.length) return console.log('no deliveries');
        for (const o of rows) {
          const b = o.body;
          const last = b.attempts[b.attempts.length - 1];
          const outcome = b.state === 'retrying' ? `next attempt ${b.nextAttemptAt}` : last?.httpStatus ? `HTTP ${last.httpStatus}` : '';
          const parts = [
            o.createdAt,
            b.state.padEnd(9),
            `${b.attemptCount} attempt${b.attemptCount === 1 ? ' ' : 's'}`,
            `${b.recipient.type}:${b.recipient.target} (${b.recipient.id})`,
            `${b.source} ${b.status}`,
            JSON.stringify(b.alert.name),
            outcome,
            b.error ? `error: ${b.error}` : '',
          ];
          console.log(parts.filter(Boolean).join('  '));
        }
      }),
    );
}
