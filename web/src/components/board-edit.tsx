// The board editor, loaded only when a board's Edit mode is first opened (it is not part of the
// first-load JavaScript).
import type { Board, BoardView } from '../api/types.js';
import type { Scope } from '../routes.js';
import { Loaded, useAsync } from './ui.js';

export function LazyBoardEditor(props: { scope: Scope; board: Board; views: BoardView[]; onDone: () => void }) {
  const mod = useAsync(() => import('./board-editor.js'), []);
  return <Loaded async={mod} label="Loading the editor">{(m) => <m.BoardEditor {...props} />}</Loaded>;
}
