// The environment's boards.
import { listBoards } from '../api/endpoints.js';
import { Empty, Loaded, PageHead, useAsync } from '../components/ui.js';
import { Link } from '../router.js';
import { pathOf, type Scope } from '../routes.js';

export function BoardsPage({ scope }: { scope: Scope }) {
  const boards = useAsync(() => listBoards(), []);
  return (
    <div class="stack">
      <PageHead title="Boards" sub="Saved queries, SLOs and notes, together on one page" />
      <Loaded async={boards} label="Loading boards">
        {(list) =>
          list.length === 0 ? (
            <div class="panel">
              <Empty>
                No boards yet. Boards are made through the API (<code>POST /1/boards</code>) or the Honeycomb Terraform provider.
              </Empty>
            </div>
          ) : (
            <div class="grid cols-3">
              {list.map((b) => (
                <Link key={b.id} class="panel" href={pathOf({ page: 'board', boardId: b.id, ...scope })} style={{ color: 'inherit' }}>
                  <h2 style={{ color: 'var(--link)' }}>{b.name}</h2>
                  {b.description && <p class="muted small">{b.description}</p>}
                  <div class="row small">
                    <span class="badge">
                      {b.panels.length} {b.panels.length === 1 ? 'panel' : 'panels'}
                    </span>
                    {(b.tags ?? []).map((t) => (
                      <span key={t.key} class="badge accent">
                        {t.key}:{t.value}
                      </span>
                    ))}
                  </div>
                </Link>
              ))}
            </div>
          )
        }
      </Loaded>
    </div>
  );
}
