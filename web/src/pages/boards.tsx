// The environment's boards: each opened, deleted, or a new one made ("New board": its name and
// description, POST /1/boards, then its Edit mode to add panels).
import { useState } from 'preact/hooks';
import { createBoard, deleteBoard, listBoards } from '../api/endpoints.js';
import type { Board } from '../api/types.js';
import { Empty, ErrorNotice, Loaded, PageHead, useAsync } from '../components/ui.js';
import { Link, navigate } from '../router.js';
import { pathOf, type Scope } from '../routes.js';

export function BoardsPage({ scope }: { scope: Scope }) {
  const boards = useAsync(() => listBoards(), []);
  const [making, setMaking] = useState(false);
  const [error, setError] = useState<unknown>();
  const remove = async (b: Board) => {
    if (!confirm(`Delete the board "${b.name}" and its views?`)) return;
    try {
      await deleteBoard(b.id);
      boards.reload();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <div class="stack">
      <PageHead title="Boards" sub="Saved queries, SLOs and notes, together on one page">
        <button class="primary" onClick={() => setMaking(true)} disabled={making}>
          New board
        </button>
      </PageHead>
      {making && (
        <NewBoardForm
          onDone={(b) => {
            setMaking(false);
            if (b) navigate(`${pathOf({ page: 'board', boardId: b.id, ...scope })}?edit=1`);
          }}
        />
      )}
      {error !== undefined && <ErrorNotice error={error} />}
      <Loaded async={boards} label="Loading boards">
        {(list) =>
          list.length === 0 ? (
            <div class="panel">
              <Empty>No boards yet: "New board" makes one, and a query's "Add to board" puts its chart on one.</Empty>
            </div>
          ) : (
            <div class="grid cols-3" data-testid="boards-list">
              {list.map((b) => (
                <div key={b.id} class="panel board-card" data-board={b.name}>
                  <h2>
                    <Link href={pathOf({ page: 'board', boardId: b.id, ...scope })}>{b.name}</Link>
                  </h2>
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
                    <span class="spacer" />
                    <button class="ghost danger small" aria-label={`Delete board ${b.name}`} onClick={() => void remove(b)}>
                      Delete
                    </button>
                  </div>
                </div>
              ))}
            </div>
          )
        }
      </Loaded>
    </div>
  );
}

function NewBoardForm({ onDone }: { onDone: (b?: Board) => void }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [state, setState] = useState<{ busy?: boolean; error?: unknown }>({});
  const submit = async (e: Event) => {
    e.preventDefault();
    setState({ busy: true });
    try {
      onDone(await createBoard({ name: name.trim(), description, type: 'flexible', panels: [] }));
    } catch (error) {
      setState({ error });
    }
  };
  return (
    <section class="panel">
      <h2>New board</h2>
      <form class="settings-form new-board" onSubmit={submit}>
        <label class="field">
          Name
          <input name="name" required maxLength={255} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </label>
        <label class="field">
          Description
          <textarea name="description" maxLength={1024} rows={2} value={description} onInput={(e) => setDescription((e.target as HTMLTextAreaElement).value)} />
        </label>
        {state.error !== undefined && <ErrorNotice error={state.error} />}
        <div class="row">
          <button class="primary" type="submit" disabled={state.busy || name.trim() === ''}>
            Create board
          </button>
          <button type="button" onClick={() => onDone()}>
            Cancel
          </button>
        </div>
      </form>
    </section>
  );
}
