// What every API module receives from the app factory.
import type { ConfigStore } from '../stores/config/types.js';
import type { Settings } from '../settings.js';

export interface ApiContext {
  store: ConfigStore;
  now: () => Date;
  settings: Settings;
}
