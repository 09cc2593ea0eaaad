// Adding a marker (a deploy, an incident, any event worth seeing on every chart): the time comes
// from a click on a chart (or is now), the message and type are typed; POST /1/markers/<dataset>
// (`__all__`: an environment-wide marker). Marker settings colour markers by type.
import { useState } from 'preact/hooks';
import { createMarker } from '../api/endpoints.js';
import { fromLocalInput, toLocalInput } from '../time.js';
import { ErrorNotice } from './ui.js';

export function MarkerForm({ dataset, time, onDone }: { dataset: string; time: number; onDone: (made: boolean) => void }) {
  const [at, setAt] = useState(toLocalInput(time));
  const [message, setMessage] = useState('');
  const [type, setType] = useState('deploy');
  const [url, setUrl] = useState('');
  const [state, setState] = useState<{ busy?: boolean; error?: unknown }>({});
  const save = async (e: Event) => {
    e.preventDefault();
    setState({ busy: true });
    try {
      const start = fromLocalInput(at);
      if (start === undefined) throw new Error('the time is not a valid date and time');
      await createMarker(dataset, { start_time: start, message, type, ...(url.trim() ? { url: url.trim() } : {}) });
      onDone(true);
    } catch (error) {
      setState({ error });
    }
  };
  return (
    <form class="settings-form marker-form panel" onSubmit={save} aria-label="New marker">
      <div class="row">
        <label class="field">
          At
          <input name="time" type="datetime-local" required value={at} onInput={(e) => setAt((e.target as HTMLInputElement).value)} />
        </label>
        <label class="field">
          Type
          <input name="type" maxLength={255} value={type} onInput={(e) => setType((e.target as HTMLInputElement).value)} />
        </label>
      </div>
      <label class="field">
        Message
        <input name="message" required maxLength={1024} value={message} placeholder="deploy of checkout v1.4.2" onInput={(e) => setMessage((e.target as HTMLInputElement).value)} />
      </label>
      <label class="field">
        Link (optional)
        <input name="url" type="url" value={url} onInput={(e) => setUrl((e.target as HTMLInputElement).value)} />
      </label>
      <div class="row">
        <button class="primary" type="submit" disabled={state.busy || message.trim() === ''}>{state.busy ? 'Saving…' : 'Add marker'}</button>
        <button type="button" class="ghost" onClick={() => onDone(false)}>Cancel</button>
      </div>
      {state.error !== undefined && <ErrorNotice error={state.error} title="Not saved" />}
    </form>
  );
}
